/**
 * The executor's input and result shapes, and the interface a replacement executor implements.
 * @module
 */
import type { Usage } from '../backend/types.js';
import type { LoopCheckpoint } from '../durability/types.js';
import type { HarnessErrorCode } from '../errors.js';
import type { DataMark } from '../prompts/datamark.js';
import type { Workspace } from '../workspace/types.js';
import type { InterruptedCall } from './work.js';

/** One executor loop to run. */
export interface ExecutorRunInput {
  runId: string;
  purpose: 'execute' | 'synthesize' | 'repair';
  /** `subtask-1`, `synthesis`, `repair-1`, … */
  scope: string;
  /** The original user request, verbatim. */
  request: string;
  /** The local objective: a subtask, the synthesis or the repair instructions. */
  objective: string;
  /** Rendered checkpoints of earlier subtasks, or the current deliverable. */
  priorState?: string;
  workspace: Workspace;
  signal?: AbortSignal;
  /** Overrides `limits.maxIterations` for this loop (e.g. the run budget left). */
  maxIterations?: number;
  /** Overrides `limits.timeoutMs` for this loop (e.g. the run time left). */
  timeoutMs?: number;
  /**
   * The run's boundary of untrusted text: tool output and summaries are marked with it and the system prompt names
   * it. Pass the one `objective` and `priorState` were marked with. Absent: a fresh one for this loop.
   */
  dataMark?: DataMark;
  /**
   * Goes on from this saved state instead of a fresh dialogue: a finished tool call of the last reply keeps its
   * result, a started unfinished one is re-run when its tool is read-only and otherwise answered as interrupted.
   * New tool output is marked with the data boundary the saved dialogue names (`dataMark`, when passed, must be that
   * one); a damaged checkpoint, or one of another purpose or scope, is refused with `invalid-input`.
   */
  resumeFrom?: LoopCheckpoint;
  /**
   * Called with the loop's state after every model response and before and after every tool call, one call at a
   * time (checkpoints made meanwhile collapse into the newest); a rejection ends the loop `failed` with that error (a
   * store that cannot save must not let the run go on unrecorded). A call of a tool that is not read-only always
   * waits until the checkpoint journaling it as started is saved; what else waits is `durability`'s choice.
   */
  onCheckpoint?: (checkpoint: LoopCheckpoint) => Promise<void>;
  /**
   * `'sync'`: the loop waits for every checkpoint to be saved, so a resume re-does at most one model call and one
   * read-only tool call. `'async'`: only calls of tools that are not read-only wait (for the checkpoint journaling
   * them as started); the other saves go on behind the loop, and a resume re-does the model calls and read-only
   * calls made after the last saved one. The loop waits for its saves before it ends either way.
   * @defaultValue 'async'
   */
  durability?: Durability;
}

/** How much of an executor loop waits for its checkpoints to be saved (see {@link ExecutorRunInput.durability}). */
export type Durability = 'sync' | 'async';

/** How one executor loop ended. */
export interface ExecutorResult {
  status: 'completed' | 'failed' | 'aborted' | 'timeout';
  /** The submitted answer; when the loop did not complete, the last text the model wrote. */
  answer: string;
  /**
   * Workspace-relative, de-duplicated paths of every file the loop's tools wrote or edited, whatever way it ended,
   * plus the files named in `submit_answer`.
   */
  files: string[];
  /** Model calls made (a retry after a context-length error counts once). */
  iterations: number;
  usage: Usage;
  /** Largest request sent, in tokens as the memory counts them. */
  peakRequestTokens: number;
  /**
   * Calls of tools that are not read-only which a crash interrupted and this loop, resumed, answered as interrupted
   * instead of running them again; absent when there was none.
   */
  interruptedCalls?: InterruptedCall[];
  error?: { code: HarnessErrorCode; message: string };
}

/** Anything that runs one ReAct loop like `Executor`; pass one as `components.executor`. */
export interface ExecutorLike {
  run(input: ExecutorRunInput): Promise<ExecutorResult>;
}
