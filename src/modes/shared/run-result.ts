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
 * produced one), every planned subtask in plan order (those never started as `skipped`) and the report.
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
  let status: RunResult['status'] = 'succeeded';
  let error = failure?.error;
  if (failure) status = failure.reason === 'aborted' ? 'aborted' : failure.reason === 'timeout' ? 'timeout' : 'failed';
  else if (verdicts.at(-1)?.status === 'failed') {
    const last = verdicts.at(-1) as Verdict;
    status = 'failed';
    error = {
      code: 'verification-failed',
      message:
        `The deliverable still has ${last.defects.length} defect(s) after ${verdicts.length - 1} repair(s): ` +
        last.defects.map((d) => d.description).join(' | '),
    };
  }
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
