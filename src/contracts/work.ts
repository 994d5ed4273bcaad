/**
 * Shapes of a pipeline run: plan, subtasks, deliverable, verdicts, report and result.
 * @module
 */
import type { Purpose, Usage } from '../backend/types.js';
import type { TaskState } from './task-state.js';

/**
 * Why a loop's request no longer starts with the whole of its previous request: `compression` (earlier rounds
 * summarised), `emergency` (pruned deterministically at the hard limit), `prune` (pruned instead of a failed summary,
 * or after the provider answered "context length exceeded"), `aging` (a batch of old observations collapsed to
 * digests), `other` (anything else rewrote an earlier message, e.g. a custom memory).
 */
export type CacheBreakCause = 'compression' | 'emergency' | 'prune' | 'aging' | 'other';

/** The `cache-break` events of one cause in a run. */
export interface CacheBreakCount {
  count: number;
  /** Sum of their `prefixTokensLost`. */
  prefixTokensLost: number;
}

/** What a `run-warning` event is about. */
export type RunWarningCode =
  | 'answer-save-failed'
  | 'output-save-failed'
  | 'summarizer-failed'
  | 'images-not-seen'
  /** The run's finished snapshot could not be saved; its last running one stays in the store. */
  | 'snapshot-save-failed'
  /** Two subtasks that ran at the same time wrote the same workspace file; the later write is what the file holds. */
  | 'write-conflict'
  /** A provider reported under half the input tokens counted for a request; the report was ignored for calibration. */
  | 'usage-under-reported'
  /** The typed result of `run({ output })` failed its schema after one re-ask; the result has no `output`. */
  | 'output-invalid';

/** One planned subtask (the planner's JSON plus a stable id). */
export interface PlannedSubtask {
  /** `subtask-1`, `subtask-2`, … in plan order. */
  id: string;
  title: string;
  objective: string;
  expectedOutput: string;
  /**
   * 0-based indices of the earlier subtasks of the plan whose results this one needs, ascending. Absent: it depends on
   * every earlier subtask (the paper's strict order). `[]`: it needs none, and may run beside the others (see
   * `limits.maxParallelSubtasks`).
   */
  dependsOn?: number[];
}

/**
 * A call of a tool that is not read-only which a crash or restart interrupted while it ran. A resumed run never runs it
 * again (its side effect may have happened, or only half): the model is told, and the call is recorded so that
 * verification checks whether its work is there.
 */
export interface InterruptedCall {
  /** The loop it was made in: `subtask-1`, `subtask-1-attempt-2`, `synthesis`, `repair-1`, …. */
  scope: string;
  toolName: string;
  /**
   * Its arguments as the model sent them, bounded: `name=value` pairs (`path="report.md", content="…"`), each value
   * cut to 80 characters and the whole to 300; arguments that are not a JSON object are cut to 300 characters.
   */
  arguments: string;
}

/** What a subtask, the synthesizer or a repair hands on: text plus workspace-relative file paths. */
export interface Deliverable {
  answer: string;
  files: string[];
  /**
   * The calls a crash interrupted in the loops this deliverable was made by (its subtasks, the synthesis, the
   * repairs), in the order they were made; absent when there was none. The verify request names each one.
   */
  interruptedCalls?: InterruptedCall[];
}

/** A compact checkpoint passed from one subtask to the next (never the tool trace). */
export interface Checkpoint extends Deliverable {
  subtaskId: string;
  title: string;
  status: 'completed' | 'failed';
}

/** A shortcoming the verifier found. */
export interface Defect {
  description: string;
  /** Workspace-relative path of the file the defect concerns, when there is one. */
  artifact?: string;
}

/**
 * One verification pass. `unverified` means the verifier gave no usable judgement: its reply stayed malformed, or it
 * failed the deliverable without naming a defect, also when asked again in a fresh request; the harness does not
 * repair an unverified deliverable, and a run whose last verdict is `unverified` ends with that status.
 */
export interface Verdict {
  attempt: number;
  status: 'passed' | 'failed' | 'unverified';
  passed: boolean;
  defects: Defect[];
  /** Images of the delivered files the verify request showed the model. */
  imagesSeen: number;
  /**
   * Images of the delivered files it did not show (a backend without images, the image budget, an image that could not
   * be read or downscaled, the window); the request named them.
   */
  imagesSkipped: number;
  /** Why the verdict is `unverified`. */
  reason?: string;
}

/**
 * A workspace file that subtasks running at the same time both wrote. Nothing is undone: the file holds the last
 * writer's content, and the synthesizer and the report are told who wrote it.
 */
export interface WriteConflict {
  /** Workspace-relative path. */
  path: string;
  /** Ids of the subtasks that wrote it, in the order of their last writes: the file holds the last one's. */
  writers: string[];
}

/** How one subtask went. */
export interface SubtaskRecord extends PlannedSubtask {
  status: 'completed' | 'failed' | 'skipped';
  attempts: number;
  answer: string;
  files: string[];
  /** Workspace-relative path of the full answer, saved when it is too long to pass on whole. */
  answerFile?: string;
  error?: string;
  /** The code of the error that ended its last attempt (e.g. `budget-exhausted`: the loop used all its iterations). */
  errorCode?: string;
  /**
   * Files this subtask and another one running at the same time both wrote, found when this subtask finished (the
   * other one had finished first, so the conflict is recorded once, on the later of the two).
   */
  writeConflicts?: WriteConflict[];
  /** Calls of its attempts that a crash interrupted and a resumed run did not run again; absent when there was none. */
  interruptedCalls?: InterruptedCall[];
}

/** Model calls and tokens of one purpose. */
export interface PurposeUsage {
  calls: number;
  /** Every input token, cache reads and writes included. */
  inputTokens: number;
  outputTokens: number;
  /** Input tokens served from the provider's prompt cache; present once a call of this purpose reported a figure. */
  cachedInputTokens?: number;
  /** Input tokens written to the provider's prompt cache; present once a call of this purpose reported a figure. */
  cacheWriteInputTokens?: number;
  /** `cachedInputTokens / inputTokens`: the share of input served from the cache (present with `cachedInputTokens`). */
  cacheHitRatio?: number;
}

/**
 * What a run's model calls cost, in the one currency of its prices. Calls without a price are not in `total`;
 * `unpricedCalls` says how many there were.
 */
export interface RunCost {
  currency: string;
  /** The priced calls' costs added up. */
  total: number;
  /** The same per purpose (a purpose appears once one of its calls was priced). */
  byPurpose: Partial<Record<Purpose, number>>;
  /** Calls made without a price (their backend and role had none); 0 when every call was priced. */
  unpricedCalls: number;
}

/** Behaviour metrics of one run (plain JSON, comparable across backends). */
export interface RunReport {
  wallTimeMs: number;
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  byPurpose: Partial<Record<Purpose, PurposeUsage>>;
  toolCalls: number;
  toolCallsByTool: Record<string, number>;
  /** Largest request sent to any backend, in tokens as the harness counts them. */
  peakRequestTokens: number;
  subtasks: number;
  subtaskAttempts: number;
  failedSubtasks: number;
  /** null when verification was off or never reached. */
  firstPassVerified: boolean | null;
  repairs: number;
  /**
   * Whether the verdict after the last repair passed; null when no repair ran, or when no usable verdict followed it
   * (the run is then `unverified`).
   */
  repairRecovered: boolean | null;
  truncations: number;
  compressions: number;
  prunes: number;
  /**
   * `cache-break` events by cause: how often a loop's request rewrote part of its previous one (so a provider's prompt
   * cache could not serve it past the change) and the tokens of previous requests lost that way.
   */
  cacheBreaks: Partial<Record<CacheBreakCause, CacheBreakCount>>;
  /**
   * `run-warning` events by code: things lost or degraded without failing the run (an answer that could not be
   * saved whole, a failing summariser, images the verifier could not see).
   */
  warnings: Partial<Record<RunWarningCode, number>>;
  /** How often the run was resumed from a snapshot, and what that re-did (see `run-resume`). */
  resumes: ResumeCounts;
  /** What the model calls cost (from `llm-response.cost`); `null` when no call had a price. */
  cost: RunCost | null;
  /**
   * Workspace files that subtasks running at the same time both wrote (one entry per path, every writer named); empty
   * when subtasks ran one at a time.
   */
  writeConflicts: WriteConflict[];
}

/** What resuming a run re-did, summed over its resumes. */
export interface ResumeCounts {
  count: number;
  /** Model calls in flight at a stop, made again. */
  redoneModelCalls: number;
  /** Read-only tool calls in flight at a stop, run again. */
  rerunToolCalls: number;
  /** Other tool calls in flight at a stop, reported to the model as interrupted instead of run again. */
  interruptedToolCalls: number;
}

/**
 * The outcome of `harness.run()`. `Output` is the type of {@link RunResult.output}, inferred from the `output`
 * schema given to `run()`.
 */
export interface RunResult<Output = unknown> {
  runId: string;
  /**
   * `succeeded`: the run ended and, with verification on, its last verdict passed. `unverified`: the run ended with a
   * deliverable (kept) but no verdict could be obtained, so nothing says it meets the request (`error` says why); a
   * host that accepts unverified work must check for this status explicitly. `blocked`: managed mode only, the manager
   * found the task blocked or asked a question no one answered.
   */
  status: 'succeeded' | 'unverified' | 'failed' | 'aborted' | 'timeout' | 'blocked';
  deliverable: Deliverable;
  plan: PlannedSubtask[];
  subtasks: SubtaskRecord[];
  verdicts: Verdict[];
  report: RunReport;
  /** Absolute path of the run's workspace directory. */
  workspace: string;
  /** Set when the run did not succeed. */
  error?: { code: string; message: string };
  /** Managed mode only: the audited task state as the run left it (also saved as `.harness/task-state.json`). */
  taskState?: TaskState;
  /**
   * The answer as a value validated against the `output` schema given to `run()`; absent when none was asked for,
   * and when the model's value still failed the schema after one re-ask (a `run-warning` with code `output-invalid`
   * says why, and `outputError` holds the schema's complaints). Never a value that did not pass the schema.
   */
  output?: Output;
  /** Why a requested {@link RunResult.output} is absent: the last validation error, or why it was not asked for. */
  outputError?: string;
}

export type { Usage };
