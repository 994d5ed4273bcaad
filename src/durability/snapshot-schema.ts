/**
 * The exact shape of a snapshot and of its executor loops, as this version writes them: strict (an unknown field is
 * refused), with the paths in it checked for where they may point. A snapshot is read back from a file or a database
 * a run does not control, so it passes this check, after its seal, before anything of it is used.
 * @module
 */
import path from 'node:path';
import { z } from 'zod';
import type { RunSnapshot } from './types.js';
import { SNAPSHOT_FORMAT } from './version.js';

const count = z.number().int().min(0);
const ImageSchema = z.strictObject({ type: z.literal('image'), data: z.string(), mediaType: z.string() });
const ContentSchema = z.union([
  z.string(),
  z.array(z.union([z.strictObject({ type: z.literal('text'), text: z.string() }), ImageSchema])),
]);
const ToolCallSchema = z.strictObject({ id: z.string(), name: z.string(), arguments: z.string() });
/** One dialogue message, field for field (`Message`). @internal */
export const MessageSchema = z.discriminatedUnion('role', [
  z.strictObject({ role: z.literal('system'), content: z.string() }),
  z.strictObject({ role: z.literal('user'), content: ContentSchema }),
  z.strictObject({ role: z.literal('assistant'), content: z.string(), toolCalls: z.array(ToolCallSchema).optional() }),
  z.strictObject({
    role: z.literal('tool'),
    toolCallId: z.string(),
    toolName: z.string(),
    content: ContentSchema,
    isError: z.boolean().optional(),
  }),
]);
const JournalSchema = z.strictObject({
  callId: z.string(),
  toolName: z.string(),
  arguments: z.string(),
  readOnly: z.boolean(),
  state: z.enum(['started', 'finished']),
  result: z
    .strictObject({
      text: z.string(),
      isError: z.boolean(),
      files: z.array(z.string()),
      images: z.array(ImageSchema).optional(),
      durationMs: z.number().min(0).optional(),
    })
    .optional(),
});

/** One executor loop's checkpoint, field for field (`LoopCheckpoint`). @internal */
export const LoopCheckpointSchema = z.strictObject({
  purpose: z.enum(['execute', 'synthesize', 'repair']),
  scope: z.string(),
  iterations: count,
  dialogue: z.array(MessageSchema).min(2),
  usage: z.strictObject({
    inputTokens: count,
    outputTokens: count,
    cachedInputTokens: count.optional(),
    cacheWriteInputTokens: count.optional(),
  }),
  peakRequestTokens: count,
  lastText: z.string(),
  cutOff: z.string(),
  toolFiles: z.array(z.string()),
  invalid: z.strictObject({ key: z.string().nullable(), count }),
  toolCalls: z.array(JournalSchema),
  interruptedCalls: z
    .array(z.strictObject({ scope: z.string(), toolName: z.string(), arguments: z.string() }))
    .optional(),
});

/** An absolute path in normal form: what the harness records for host paths. */
const absolutePath = z.string().refine((p) => path.isAbsolute(p) && path.resolve(p) === p, 'must be an absolute path');

const SnapshotSchema = z.strictObject({
  format: z.literal(SNAPSHOT_FORMAT),
  library: z.string(),
  runId: z.string(),
  mode: z.enum(['pipeline', 'managed']),
  fingerprint: z.strictObject({ hash: z.string(), fields: z.record(z.string(), z.string()) }),
  savedAt: z.number(),
  seq: count,
  status: z.enum(['running', 'finished']),
  input: z.strictObject({ task: z.string(), attachments: z.array(absolutePath) }),
  workspace: absolutePath,
  dataMark: z.string(),
  used: z.strictObject({ iterations: count, elapsedMs: z.number().min(0) }),
  state: z.unknown(),
  loops: z.array(LoopCheckpointSchema).optional(),
  result: z.unknown().optional(),
  mac: z.string().optional(),
});

/**
 * What is wrong with `snapshot`'s shape, naming the first field, or undefined when it is a snapshot exactly as this
 * version writes them: no unknown field anywhere in the header and the loops, host paths (the workspace, the
 * attachments to copy) absolute, the copied attachments (`state.attachments`) inside the workspace's `attachments/`,
 * and a finished snapshot's result that of this run. The mode's own `state` is checked by the mode.
 * @internal
 */
export function snapshotShapeProblem(snapshot: unknown): string | undefined {
  const parsed = SnapshotSchema.safeParse(snapshot);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') || '(the snapshot)';
    const keys = issue?.code === 'unrecognized_keys' ? ` (${issue.keys.join(', ')})` : '';
    return `field "${field}": ${issue?.message ?? 'invalid'}${keys}`;
  }
  const s = parsed.data as RunSnapshot;
  const copied = (s.state as { attachments?: unknown } | null)?.attachments;
  if (copied !== undefined && copied !== null) {
    if (!Array.isArray(copied) || !copied.every(isCopiedAttachment)) {
      return 'field "state.attachments": the copied attachments must be paths under attachments/ in the workspace';
    }
  }
  if (s.status === 'finished') {
    const result = s.result as { runId?: unknown; status?: unknown } | undefined;
    if (
      typeof result !== 'object' ||
      result === null ||
      result.runId !== s.runId ||
      typeof result.status !== 'string'
    ) {
      return 'field "result": a finished snapshot must hold the result of its own run';
    }
  }
  return undefined;
}

/** A workspace-relative path under `attachments/`, with no `..` and no absolute part. */
function isCopiedAttachment(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const normal = path.posix.normalize(value);
  return normal === value && normal.startsWith('attachments/') && !normal.split('/').includes('..');
}
