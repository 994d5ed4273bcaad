/**
 * How a managed run ends: the completion gate, the blocked endings, running out of rounds, the result's status and the
 * deliverable. Pure functions of the run's state.
 * @module
 */
import { headTail } from '../../memory/truncate.js';
import type { TaskState } from '../../contracts/task-state.js';
import type { Deliverable, RunReport, RunResult, Verdict } from '../../contracts/work.js';
import type { Fingerprint } from './integrity.js';
import { MANAGED_DEFAULTS } from '../shared/managed-options.js';
import { renderState } from './prompts.js';
import type { ManagedProgress } from './progress.js';
import { managedReportFromTally, type ManagedReport } from './report.js';
import type { ManagedRunResult, RunStop } from './run-init.js';
import type { ManagedEnding } from './snapshot.js';
import { openRecords } from './state.js';
import type { FinalVerification, ManagerDecision } from '../../contracts/managed.js';

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

/**
 * The stop of a run that used `managed.maxRounds` without ending: no `done` on a fully audited state, or none whose
 * final verification passed (`verification`: the last one, when it failed).
 */
export function outOfRounds(state: TaskState, maxRounds: number, verification?: FinalVerification): RunStop {
  const open = openRecords(state).map((r) => r.id);
  const failed = verification
    ? `; the final verification after the "done" of round ${verification.round} failed: ${verification.verdict.defects
        .map((d) => d.description)
        .join(' | ')}`
    : '';
  return {
    reason: 'error',
    error: {
      code: 'budget-exhausted',
      message:
        `The run used managed.maxRounds (${maxRounds}) rounds without a "done" on a fully audited state` +
        (verification ? ' that passed the final verification' : '') +
        (open.length ? `; open records: ${open.join(', ')}` : '') +
        `${failed}.`,
    },
    stage: 'manage',
  };
}

/** The ending of a final verification that gave no usable verdict. */
export function unverifiedEnding(verdict: Verdict): ManagedEnding {
  return {
    status: 'unverified',
    message:
      `The final verification gave no usable verdict on the deliverable: ${verdict.reason ?? 'the verifier gave none.'} ` +
      'The deliverable and the audited task state are kept, but nothing checked the deliverable against the request: ' +
      "review it yourself, or run again with a verify model that follows the verdict JSON format (option roles.verify). A host that accepts unverified work checks for result.status === 'unverified'.",
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
  if (ending?.status === 'unverified') {
    return { status: 'unverified', error: { code: 'verification-unavailable', message: ending.message } };
  }
  return { status: 'succeeded' };
}

/** Every file the executors created or changed that is still there, sorted. */
export function producedFiles(produced: ReadonlySet<string>, fingerprint: Fingerprint): string[] {
  return [...produced].filter((file) => fingerprint.get(file)?.startsWith('file:')).sort();
}

/** What the final verification judges: the manager's final answer and the files the executors produced. */
export function verifiedDeliverable(answer: string | undefined, files: string[]): Deliverable {
  return { answer: answer || NO_ANSWER, files };
}

const NO_ANSWER = '(The manager gave no final answer: the deliverable is its files.)';

/**
 * The run's deliverable: the manager's final answer (of the last accepted `done` no final verification rejected), then
 * the audited state in words;
 * and every file the executors created or changed that is still there.
 */
export function deliverableOf(
  state: TaskState,
  produced: ReadonlySet<string>,
  fingerprint: Fingerprint,
  finalAnswer: string | undefined,
): Deliverable {
  const done = state.records.filter((r) => r.status === 'completed').length;
  const summary =
    `Task state after round ${state.round}: ${done} of ${state.records.length} record(s) completed by clean audits.\n` +
    renderState(state, MANAGED_DEFAULTS.evidenceShown);
  const answer = finalAnswer ? `${finalAnswer}\n\n${summary}` : summary;
  return { answer, files: producedFiles(produced, fingerprint) };
}

/** What the result of a managed run is made from. */
export interface ManagedResultParts {
  runId: string;
  failure: RunStop | undefined;
  /** How the loop ended, when it ran to its end. */
  ending: ManagedEnding | undefined;
  progress: ManagedProgress;
  /** The pipeline's part of the report, given the run's verdicts. */
  report: (verdicts: readonly Verdict[]) => RunReport;
  workspace: string;
}

/** The result of a managed run as it stands: status, deliverable, the final verifications' verdicts, report, state. */
export function managedResult(parts: ManagedResultParts): ManagedRunResult {
  const p = parts.progress;
  const { status, error, blocked } = endStatus(parts.failure, parts.ending);
  const verdicts = p.verifications.map((v) => v.verdict);
  return {
    runId: parts.runId,
    status,
    deliverable: deliverableOf(p.state, p.produced, p.fingerprint, p.answer),
    plan: [],
    subtasks: [],
    verdicts,
    report: { ...parts.report(verdicts), managed: managedReportFromTally(p.tally, p.state, blocked) },
    workspace: parts.workspace,
    ...(error ? { error } : {}),
    taskState: structuredClone(p.state),
  };
}
