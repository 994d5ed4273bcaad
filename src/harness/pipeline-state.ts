/**
 * The pipeline's part of a run snapshot: where the run stands, as plain JSON.
 * @module
 */
import type { Deliverable, PlannedSubtask, SubtaskRecord, Verdict } from '../pipeline/types.js';
import type { ReportTally } from './report.js';

/** The subtask being executed and what its attempts so far left. @internal */
export interface SubtaskProgress {
  /** Index of the subtask in the plan (it is `records.length`). */
  index: number;
  /** The attempt in progress (0 before the first started). */
  attempt: number;
  /** Why the attempt before failed: it is part of the attempt's objective. */
  previousError?: string;
  /** Files the finished attempts wrote (a failed subtask keeps them). */
  triedFiles: string[];
  /** The last non-empty answer of the finished attempts. */
  lastAnswer: string;
}

/** Everything a pipeline run needs to go on, saved in `RunSnapshot.state`. @internal */
export interface PipelineState {
  kind: 'pipeline';
  /** Workspace-relative paths of the copied attachments; null until intake copied them. */
  attachments: string[] | null;
  /** The plan; null until the plan stage made it. */
  plan: PlannedSubtask[] | null;
  records: SubtaskRecord[];
  current: SubtaskProgress | null;
  /** Whether the synthesis stage ended (`synthesis-finish`). */
  synthesized: boolean;
  deliverable: Deliverable;
  verdicts: Verdict[];
  /** Repairs that ended (`repair-finish`). */
  repairs: number;
  /** The attempt of the repair started and not yet ended, or null. */
  repairing: number | null;
  /** The report's counters so far. */
  tally: ReportTally;
}

/** The stage a run in `state` goes on with, as `run-resume` names it. @internal */
export function stageOf(state: PipelineState): string {
  if (state.attachments === null) return 'intake';
  if (state.plan === null) return 'plan';
  if (state.records.length < state.plan.length) return 'execute';
  if (!state.synthesized) return 'synthesize';
  return state.repairing === null ? 'verify' : 'repair';
}

/** Whether `state` looks like a pipeline state (a snapshot's `state` is only checked, never trusted blindly). @internal */
export function isPipelineState(state: unknown): state is PipelineState {
  const s = state as Partial<PipelineState> | null;
  return (
    typeof s === 'object' &&
    s !== null &&
    s.kind === 'pipeline' &&
    Array.isArray(s.records) &&
    Array.isArray(s.verdicts) &&
    typeof s.tally === 'object' &&
    s.tally !== null
  );
}
