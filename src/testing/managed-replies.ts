/**
 * Reply builders for managed mode's roles: the manager's decision and the auditor's verdict, built-in or external.
 * @module
 */
import type { GenerateResult } from '../backend/types.js';
import type { AuditVerdict } from '../contracts/managed.js';
import type { ManagerNext, RecordDraft } from '../contracts/task-state.js';
import { HarnessError } from '../errors.js';
import { reply, submit } from './replies.js';

/** What a manager's decision may carry besides `next` (see `MANAGER_PROMPT` for when each is needed). */
export interface ManagerDecisionParts {
  /** Records the decision adds to the task state. */
  records?: RecordDraft[];
  /** With `execute`: the round's contract. Without `recordIds` it works on every open record. */
  contract?: { task: string; acceptanceCriteria: string[]; boundaries?: string[]; recordIds?: string[] };
  /** With `ask`: the question for the host. */
  question?: string;
  /** With `blocked` (or any decision): why. */
  reason?: string;
  /** With `done`: the final answer to the request. */
  answer?: string;
}

/**
 * A manager reply (the `manage` role): the decision JSON the built-in `Manager` parses.
 *
 * @example
 * ```ts
 * const backend = new ScriptedBackend({
 *   manage: [
 *     managerDecision('execute', {
 *       records: [{ id: 'report', description: 'report.md exists' }],
 *       contract: { task: 'Write report.md.', acceptanceCriteria: ['report.md exists'] },
 *     }),
 *     managerDecision('done', { answer: 'report.md is written.' }),
 *   ],
 *   // …
 * });
 * ```
 */
export function managerDecision(next: ManagerNext, parts: ManagerDecisionParts = {}): GenerateResult {
  return reply(JSON.stringify({ records: [], ...parts, next }));
}

/**
 * The built-in auditor's verdict (the `audit` role): the `submit_answer` call that ends its loop with the verdict
 * JSON. An audit loop that reads files first takes `toolCall('read_file', …)` steps before it.
 */
export function auditVerdict(verdict: AuditVerdict): GenerateResult {
  return submit(JSON.stringify(verdict));
}

/**
 * The output of an external auditor agent (a `functionAgent` or `commandAgent` as `managed.agents.auditor`): the
 * verdict in the block marked with the episode's nonce, which the auditor's prompt names. Pass the prompt the agent
 * was given; a prompt without a nonce throws.
 */
export function externalAuditOutput(prompt: string, verdict: AuditVerdict, before = 'Checked the workspace.'): string {
  // The last marker named: the auditor appends its submit instructions after everything else in the prompt.
  const nonce = [...prompt.matchAll(/`VERDICT-([0-9a-f]+)`/g)].at(-1)?.[1];
  if (!nonce) {
    throw new HarnessError(
      'invalid-input',
      'externalAuditOutput: the prompt names no `VERDICT-<nonce>` marker. Pass the prompt the auditor gave the agent.',
    );
  }
  return `${before}\nVERDICT-${nonce}\n${JSON.stringify(verdict)}\nEND-VERDICT-${nonce}\n`;
}
