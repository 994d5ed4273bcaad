/**
 * The check a loop checkpoint passes before a loop goes on from it: it comes from a file or a database a run does not
 * control (the default store lives in the workspace, which the agent's code can write), so a damaged one is refused
 * before any of it is used.
 * @module
 */
import { LoopCheckpointSchema } from '../durability/snapshot-schema.js';
import type { LoopCheckpoint } from '../durability/types.js';
import { HarnessError } from '../errors.js';
import { DataMark } from '../prompts/datamark.js';

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
  const parsed = LoopCheckpointSchema.safeParse(checkpoint);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const keys = issue?.code === 'unrecognized_keys' ? ` (${issue.keys.join(', ')})` : '';
    throw new HarnessError(
      'invalid-input',
      `Invalid executor input "resumeFrom.${issue?.path.join('.') ?? ''}": ${issue?.message ?? 'invalid'}${keys}. ` +
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
