/**
 * How a managed run ends: the completion gate, the blocked endings, running out of rounds, the result's status and the
 * deliverable. Pure functions of the run's state.
 * @module
 */
import { headTail } from '../../memory/truncate.js';
import type { TaskState } from '../../contracts/task-state.js';
import type { Deliverable, RunResult } from '../../contracts/work.js';
import type { Fingerprint } from './integrity.js';
import { MANAGED_DEFAULTS } from '../shared/managed-options.js';
import { renderState } from './prompts.js';
import type { ManagedReport } from './report.js';
import type { RunStop } from './run-init.js';
import type { ManagedEnding } from './snapshot.js';
import { openRecords } from './state.js';
import type { ManagerDecision } from '../../contracts/managed.js';

/**
 * The completion gate: `done` counts only when every record is completed by a clean audit. Returns the feedback for
 * the manager's next decision when it does not count, else `undefined`.
 */
export function refusedDone(state: TaskState): string | undefined {
  const open = openRecords(state);
  if (state.records.length > 0 && open.length === 0) return undefined;
  return open.length
    ? `You answered "done", but these records are not completed by a clean audit: ${open
        .map((r) => `${r.id} (${r.status}${r.reason ? `: ${headTail(r.reason, 300)}` : ''})`)
        .join(
          '; ',
        )}. Only audits complete records: give an execute contract for them, or "blocked" if they cannot be done.`
    : 'You answered "done", but the task state has no records. Describe the work as records and execute it: nothing is done until an audit shows it.';
}

/** The ending of a `blocked` decision: the manager's reason and the blocked records' reasons. */
export function blockedEnding(decision: ManagerDecision, state: TaskState): ManagedEnding {
  const reasons = [
    decision.reason || 'The manager gave no reason.',
    ...state.records.filter((r) => r.status === 'blocked').map((r) => `${r.id}: ${r.reason ?? 'blocked'}`),
  ];
  return {
    status: 'blocked',
    message: `The manager reports the task blocked: ${reasons.join(' | ')}`,
    blocked: { reasons },
  };
}

/** The ending of a question no `managed.onAsk` can answer. */
export function unansweredEnding(question: string): ManagedEnding {
  return {
    status: 'blocked',
    message: `The manager asked a question and no managed.onAsk is set to answer it: ${question}`,
    blocked: { reasons: [], question },
  };
}

/** The stop of a run that used `managed.maxRounds` without a `done` on a fully audited state. */
export function outOfRounds(state: TaskState, maxRounds: number): RunStop {
  const open = openRecords(state).map((r) => r.id);
  return {
    reason: 'error',
    error: {
      code: 'budget-exhausted',
      message:
        `The run used managed.maxRounds (${maxRounds}) rounds without a "done" on a fully audited state` +
        (open.length ? `; open records: ${open.join(', ')}.` : '.'),
    },
    stage: 'manage',
  };
}

/** The result's status and error from how the run stopped or ended, and the report's `blocked` section. */
export function endStatus(
  failure: RunStop | undefined,
  ending: ManagedEnding | undefined,
): { status: RunResult['status']; error?: NonNullable<RunResult['error']>; blocked?: ManagedReport['blocked'] } {
  if (failure) {
    const status = failure.reason === 'aborted' || failure.reason === 'timeout' ? failure.reason : 'failed';
    return { status, error: failure.error };
  }
  if (ending?.status === 'blocked') {
    return { status: 'blocked', error: { code: 'blocked', message: ending.message }, blocked: ending.blocked };
  }
  return { status: 'succeeded' };
}

/** The audited state in words, and every file the executors created or changed that is still there. */
export function deliverableOf(state: TaskState, produced: ReadonlySet<string>, fingerprint: Fingerprint): Deliverable {
  const done = state.records.filter((r) => r.status === 'completed').length;
  const answer =
    `Task state after round ${state.round}: ${done} of ${state.records.length} record(s) completed by clean audits.\n` +
    renderState(state, MANAGED_DEFAULTS.evidenceShown);
  const files = [...produced].filter((file) => fingerprint.get(file)?.startsWith('file:')).sort();
  return { answer, files };
}
