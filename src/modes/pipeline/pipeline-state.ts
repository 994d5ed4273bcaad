/**
 * The pipeline's part of a run snapshot: where the run stands, as plain JSON.
 * @module
 */
import type { Deliverable, InterruptedCall, PlannedSubtask, SubtaskRecord, Verdict } from '../../contracts/work.js';
import type { ReportTally } from '../shared/report.js';

/** A subtask being executed and what its attempts so far left. @internal */
export interface SubtaskProgress {
  /** Index of the subtask in the plan. */
  index: number;
  /** The attempt in progress (0 before the first started). */
  attempt: number;
  /** Why the attempt before failed: it is part of the attempt's objective. */
  previousError?: string;
  /** Files the finished attempts wrote (a failed subtask keeps them). */
  triedFiles: string[];
  /** The last non-empty answer of the finished attempts. */
  lastAnswer: string;
  /** Calls of the finished attempts that a crash interrupted (see `InterruptedCall`); absent when there was none. */
  interruptedCalls?: InterruptedCall[];
  /**
   * Ids of the subtasks whose checkpoints are this subtask's prior state, in plan order: every subtask that had
   * finished when it started (its dependencies, and theirs, always among them). Fixed at its start, so that every
   * attempt, and a resumed run, renders the same prior state.
   */
  sees: string[];
}

/** Everything a pipeline run needs to go on, saved in `RunSnapshot.state`. @internal */
export interface PipelineState {
  kind: 'pipeline';
  /** Workspace-relative paths of the copied attachments; null until intake copied them. */
  attachments: string[] | null;
  /** The plan; null until the plan stage made it. */
  plan: PlannedSubtask[] | null;
  /** The finished subtasks, in plan order. */
  records: SubtaskRecord[];
  /** The subtasks running now (several with `limits.maxParallelSubtasks` above 1), in plan order. */
  current: SubtaskProgress[];
  /** Workspace paths the subtasks' tools wrote, each with its writers, the latest last (see `recordSubtaskWrites`). */
  writes: Record<string, string[]>;
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
    Array.isArray(s.current) &&
    typeof s.writes === 'object' &&
    s.writes !== null &&
    Array.isArray(s.verdicts) &&
    typeof s.tally === 'object' &&
    s.tally !== null
  );
}
