/**
 * The role interfaces of the pipeline: what each role receives and returns, and the `…Like` interface a
 * replacement (`components: { planner, … }`) implements. Roles and the harness both depend on these.
 * @module
 */
import type { ExecutorResult } from './executor.js';
import type { DataMark } from '../prompts/datamark.js';
import type { Workspace } from '../workspace/types.js';
import type { Defect, Deliverable, PlannedSubtask, SubtaskRecord, Verdict } from './work.js';

/** What {@link Planner.plan} receives. */
export interface PlanInput {
  /** The original request, verbatim. */
  request: string;
  /** Workspace-relative paths of the attachments (e.g. `attachments/report.pdf`). */
  attachments?: readonly string[];
  /** Where the attachments are; with it the planner sees bounded previews of them, without it only their names. */
  workspace?: Workspace;
  /** Upper bound on subtasks; the first `maxSubtasks` are kept when the model returns more. */
  maxSubtasks?: number;
  signal?: AbortSignal;
  runId?: string;
  /** The run's boundary of untrusted text in prompts; absent: a fresh one for this call. */
  dataMark?: DataMark;
}

/** A plan, and why it differs from the model's reply when it does. */
export interface PlanOutcome {
  subtasks: PlannedSubtask[];
  /**
   * `single-subtask`: the reply stayed malformed after one re-ask; `truncated`: too many subtasks, cut (for the built-in
   * planner: still too many after one re-ask stating the cap).
   */
  fallback?: 'single-subtask' | 'truncated';
  reason?: string;
}

/** Anything that can plan; pass one as `components.planner`. */
export interface PlannerLike {
  plan(input: PlanInput): Promise<PlanOutcome>;
}

/** What {@link Synthesizer.synthesize} receives. */
export interface SynthesizeInput {
  runId: string;
  /** The original request, verbatim. */
  request: string;
  /** Every subtask, failed ones included: they are named to the model, not hidden. */
  subtasks: readonly SubtaskRecord[];
  /** Workspace-relative paths of the attachments. */
  attachments?: readonly string[];
  workspace: Workspace;
  signal?: AbortSignal;
  /** Iterations this loop may use (the run's budget left). */
  maxIterations?: number;
  /** Milliseconds this loop may use (the run's time left). */
  timeoutMs?: number;
  /** The run's boundary of untrusted text in prompts; absent: a fresh one for this call. */
  dataMark?: DataMark;
}

/** The synthesis result; `executor` is the loop's own result (usage, iterations, error). */
export interface SynthesisOutcome {
  status: ExecutorResult['status'];
  deliverable: Deliverable;
  executor: ExecutorResult;
}

/** Anything that can synthesize; pass one as `components.synthesizer`. */
export interface SynthesizerLike {
  synthesize(input: SynthesizeInput): Promise<SynthesisOutcome>;
}

/** A subtask result as the verifier sees it. */
export interface SubtaskAnswer {
  title: string;
  status: string;
  answer: string;
  files: readonly string[];
  /** Workspace-relative path of the full answer when `answer` is long. */
  answerFile?: string;
}

/** What {@link Verifier.verify} receives. */
export interface VerifyInput {
  /** The original request, verbatim. */
  request: string;
  deliverable: Deliverable;
  subtaskAnswers?: readonly SubtaskAnswer[];
  /** Workspace-relative paths of the attachments. */
  attachments?: readonly string[];
  workspace: Workspace;
  /** 1 for the first verification, 2 after the first repair, …. */
  attempt?: number;
  signal?: AbortSignal;
  runId?: string;
  /** The run's boundary of untrusted text in prompts; absent: a fresh one for this call. */
  dataMark?: DataMark;
}

/** Anything that can verify; pass one as `components.verifier`. */
export interface VerifierLike {
  verify(input: VerifyInput): Promise<Verdict>;
}

/** What {@link Repairer.repair} receives. */
export interface RepairInput {
  runId: string;
  /** The original request, verbatim. */
  request: string;
  deliverable: Deliverable;
  defects: readonly Defect[];
  /**
   * The subtasks the deliverable was built from, failed ones included: the repair loop sees their checkpoints (each
   * answer bounded and its files named, exactly as a later subtask sees them), so that it can apply what they found.
   * Absent: the loop sees the deliverable only.
   */
  subtasks?: readonly SubtaskRecord[];
  /**
   * Defects of earlier verifications that the latest one no longer lists (earlier repairs fixed them, as far as
   * verification can tell): the loop is told to keep them fixed, so that a repair does not undo one.
   */
  fixedDefects?: readonly Defect[];
  /** 1 for the first repair, …; the loop's scope is `repair-<attempt>`. */
  attempt: number;
  workspace: Workspace;
  signal?: AbortSignal;
  /** Iterations of this repair loop. @defaultValue DEFAULTS.repairIterations (50) */
  maxIterations?: number;
  timeoutMs?: number;
  /** The run's boundary of untrusted text in prompts; absent: a fresh one for this call. */
  dataMark?: DataMark;
}

/** The repair result: the updated deliverable (the previous one where the loop handed back nothing). */
export interface RepairOutcome {
  status: ExecutorResult['status'];
  deliverable: Deliverable;
  executor: ExecutorResult;
}

/** Anything that can repair; pass one as `components.repairer`. */
export interface RepairerLike {
  repair(input: RepairInput): Promise<RepairOutcome>;
}
