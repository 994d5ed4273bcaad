/**
 * The result of a run, assembled from its state when it ends, however it ends.
 * @module
 */
import { partialDeliverable } from '../../handoff/checkpoints.js';
import type { Deliverable, PlannedSubtask, RunResult, SubtaskRecord, Verdict } from '../../contracts/work.js';
import { reportFromTally, type ReportTally } from './report.js';
import type { StopRun } from './run-control.js';

/** The state of a run at its end. @internal */
export interface RunEndState {
  runId: string;
  failure: StopRun | undefined;
  deliverable: Deliverable;
  plan: readonly PlannedSubtask[];
  records: readonly SubtaskRecord[];
  verdicts: readonly Verdict[];
  workspace: string;
  tally: ReportTally;
  wallTimeMs: number;
}

/**
 * The run's result: status from how it stopped and the last verdict, the deliverable (the partial one when no stage
 * produced one), every planned subtask in plan order (those never started as `skipped`) and the report. A run that
 * ran to its end succeeds only when its last verdict passed (or it had none: verification off) and it delivered an
 * answer or a file; a last verdict that failed makes it `failed`, one that could not be obtained `unverified`, an empty
 * deliverable `failed` (`nothing-delivered`) whatever the verdict.
 * @internal
 */
export function assembleResult(state: RunEndState): RunResult {
  const { failure, verdicts } = state;
  const recorded = new Map(state.records.map((record) => [record.id, record]));
  const subtasks = state.plan.map(
    (subtask): SubtaskRecord =>
      recorded.get(subtask.id) ?? { ...subtask, status: 'skipped', attempts: 0, answer: '', files: [] },
  );
  const deliverable =
    state.deliverable.answer || state.deliverable.files.length ? state.deliverable : partialDeliverable(state.records);
  const { status, error } = failure
    ? stoppedOutcome(failure)
    : isEmpty(deliverable)
      ? nothingDelivered(subtasks)
      : verdictOutcome(verdicts);
  return {
    runId: state.runId,
    status,
    deliverable,
    plan: [...state.plan],
    subtasks,
    verdicts: [...verdicts],
    workspace: state.workspace,
    ...(error ? { error } : {}),
    report: reportFromTally(state.tally, { wallTimeMs: state.wallTimeMs, subtasks, verdicts }),
  };
}

type Outcome = { status: RunResult['status']; error?: RunResult['error'] };

function isEmpty(deliverable: Deliverable): boolean {
  return deliverable.answer.trim() === '' && deliverable.files.length === 0;
}

/**
 * A run that ran to its end with no answer and no file delivered nothing, whatever a verdict said of it: a verifier
 * that passes an empty deliverable (or no verifier at all) does not make it a success.
 */
function nothingDelivered(subtasks: readonly SubtaskRecord[]): Outcome {
  const failed = subtasks.filter((subtask) => subtask.status === 'failed');
  const codes = [...new Set(failed.map((subtask) => subtask.errorCode ?? 'unknown'))];
  const first = failed[0];
  const why = first
    ? ` ${failed.length} of ${subtasks.length} subtask(s) failed (${codes.join(', ')}); the first, "${first.id}": ` +
      `${first.error ?? 'no message'}`
    : '';
  return {
    status: 'failed',
    error: {
      code: 'nothing-delivered',
      message:
        `The run ended with an empty deliverable: no answer and no file.${why} See result.subtasks for each ` +
        "subtask's error (errorCode), and the run's events for what the model did.",
    },
  };
}

function stoppedOutcome(failure: StopRun): Outcome {
  const status = failure.reason === 'aborted' ? 'aborted' : failure.reason === 'timeout' ? 'timeout' : 'failed';
  return { status, error: failure.error };
}

/** The outcome of a run that ran to its end, from its last verdict. */
function verdictOutcome(verdicts: readonly Verdict[]): Outcome {
  const last = verdicts.at(-1);
  if (!last || last.status === 'passed') return { status: 'succeeded' };
  const repairs = verdicts.length - 1;
  if (last.status === 'failed') {
    return {
      status: 'failed',
      error: {
        code: 'verification-failed',
        message:
          `The deliverable still has ${last.defects.length} defect(s) after ${repairs} repair(s): ` +
          last.defects.map((d) => d.description).join(' | '),
      },
    };
  }
  const after = repairs ? ` after ${repairs} repair(s)` : '';
  return {
    status: 'unverified',
    error: {
      code: 'verification-unavailable',
      message:
        `No usable verdict on the deliverable${after}: ${last.reason ?? 'the verifier gave none.'} The deliverable ` +
        'is kept but nothing checked it against the request: review it yourself, or run again with a verify model ' +
        "that follows the verdict JSON format (option roles.verify). A host that accepts unverified work checks for result.status === 'unverified'.",
    },
  };
}
