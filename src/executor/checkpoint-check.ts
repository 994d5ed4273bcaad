/**
 * The check a loop checkpoint passes before a loop goes on from it: it comes from a file or a database a run does not
 * control (the default store lives in the workspace, which the agent's code can write), so a damaged one is refused
 * before any of it is used.
 * @module
 */
import { z } from 'zod';
import type { LoopCheckpoint } from '../durability/types.js';
import { HarnessError } from '../errors.js';
import { DataMark } from '../prompts/datamark.js';

const count = z.number().int().min(0);
const ContentSchema = z.union([
  z.string(),
  z.array(
    z.union([
      z.object({ type: z.literal('text'), text: z.string() }),
      z.object({ type: z.literal('image'), data: z.string(), mediaType: z.string() }),
    ]),
  ),
]);
const ToolCallSchema = z.object({ id: z.string(), name: z.string(), arguments: z.string() });
const MessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({ role: z.literal('user'), content: ContentSchema }),
  z.object({ role: z.literal('assistant'), content: z.string(), toolCalls: z.array(ToolCallSchema).optional() }),
  z.object({
    role: z.literal('tool'),
    toolCallId: z.string(),
    toolName: z.string(),
    content: ContentSchema,
    isError: z.boolean().optional(),
  }),
]);
const JournalSchema = z.object({
  callId: z.string(),
  toolName: z.string(),
  arguments: z.string(),
  readOnly: z.boolean(),
  state: z.enum(['started', 'finished']),
  result: z
    .object({
      text: z.string(),
      isError: z.boolean(),
      files: z.array(z.string()),
      images: z.array(z.object({ type: z.literal('image'), data: z.string(), mediaType: z.string() })).optional(),
      durationMs: z.number().min(0).optional(),
    })
    .optional(),
});
const CheckpointSchema = z.object({
  purpose: z.enum(['execute', 'synthesize', 'repair']),
  scope: z.string(),
  iterations: count,
  dialogue: z.array(MessageSchema).min(2),
  usage: z.object({ inputTokens: count, outputTokens: count, cachedInputTokens: count.optional() }),
  peakRequestTokens: count,
  lastText: z.string(),
  cutOff: z.string(),
  toolFiles: z.array(z.string()),
  invalid: z.object({ key: z.string().nullable(), count }),
  toolCalls: z.array(JournalSchema),
  interruptedCalls: z.array(z.object({ scope: z.string(), toolName: z.string(), arguments: z.string() })).optional(),
});

/** The boundary id the saved system prompt names (`⟦data-<id>⟧`). */
const SAVED_MARK = /\u27e6data-([0-9a-f]{16})\u27e7/;

/**
 * Throws `invalid-input` unless `checkpoint` is a whole loop checkpoint of this loop's purpose and scope, naming the
 * first field that is wrong. Returns it with the boundary its dialogue was marked with: `loop.dataMark` when given
 * (it must be that one), else the one its system prompt names, so new tool output is marked as the old was.
 */
export function checkResumable(
  checkpoint: unknown,
  loop: { purpose: string; scope: string; dataMark?: DataMark | undefined },
): { checkpoint: LoopCheckpoint; mark: DataMark } {
  const parsed = CheckpointSchema.safeParse(checkpoint);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new HarnessError(
      'invalid-input',
      `Invalid executor input "resumeFrom.${issue?.path.join('.') ?? ''}": ${issue?.message ?? 'invalid'}. ` +
        'Pass a loop checkpoint exactly as onCheckpoint received it (its snapshot may be damaged or edited).',
    );
  }
  const { purpose, scope, dialogue } = parsed.data;
  if (purpose !== loop.purpose || scope !== loop.scope) {
    throw new HarnessError(
      'invalid-input',
      `Invalid executor input "resumeFrom": it is the checkpoint of the ${purpose} loop "${scope}", ` +
        `not of this ${loop.purpose} loop "${loop.scope}". Resume a loop only from its own checkpoint.`,
    );
  }
  const first = dialogue[0];
  const saved = first?.role === 'system' ? SAVED_MARK.exec(first.content)?.[1] : undefined;
  if (saved === undefined || (loop.dataMark && loop.dataMark.id !== saved)) {
    throw new HarnessError(
      'invalid-input',
      `Invalid executor input "resumeFrom": ${saved === undefined ? 'its system prompt names no data boundary' : `its dialogue is marked with data boundary ${saved}, not with the dataMark passed (${loop.dataMark?.id})`}. ` +
        'Pass the dataMark the run used (the snapshot keeps its id), or none to go on with the saved one.',
    );
  }
  return { checkpoint: checkpoint as LoopCheckpoint, mark: loop.dataMark ?? new DataMark(saved) };
}
