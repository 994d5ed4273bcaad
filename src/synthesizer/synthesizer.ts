/**
 * The synthesizer: turns subtask answers and files into the candidate deliverable (purpose `synthesize`).
 * @module
 */
import { HarnessError } from '../errors.js';
import type { ExecutorResult } from '../executor/executor.js';
import { renderCheckpoints, toCheckpoint } from '../harness/checkpoints.js';
import type { ExecutorLike } from '../harness/components.js';
import type { Deliverable, SubtaskRecord } from '../harness/types.js';
import { SYNTHESIZER_PROMPT } from '../prompts/synthesizer.js';
import { renderTemplate } from '../prompts/template.js';
import type { Workspace } from '../workspace/types.js';

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

/** Options of {@link Synthesizer}. */
export interface SynthesizerOptions {
  /** The executor that runs the synthesis loop; give it the backend and tools synthesis may use. */
  executor: ExecutorLike;
  /** Synthesis instructions; `{{subtaskCount}}` and `{{failedCount}}` are filled in. Default {@link SYNTHESIZER_PROMPT}. */
  prompt?: string;
}

/**
 * Runs one executor loop (purpose `synthesize`, scope `synthesis`) that assembles the final answer and files
 * from the subtask checkpoints; it may use tools to write files.
 *
 * @example
 * ```ts
 * const synthesizer = new Synthesizer({ executor: new Executor({ backend, tools, memory }) });
 * const { deliverable } = await synthesizer.synthesize({ runId, request, subtasks, workspace });
 * ```
 */
export class Synthesizer implements SynthesizerLike {
  private readonly options: SynthesizerOptions;

  constructor(options: SynthesizerOptions) {
    if (typeof options?.executor?.run !== 'function') {
      throw new HarnessError('invalid-options', 'Synthesizer needs `executor`: an object with run(input), e.g. an Executor.');
    }
    this.options = options;
  }

  /** Synthesizes the candidate deliverable. */
  async synthesize(input: SynthesizeInput): Promise<SynthesisOutcome> {
    const failed = input.subtasks.filter((s) => s.status !== 'completed');
    const errors = new Map(input.subtasks.flatMap((s) => (s.error ? [[s.id, s.error] as const] : [])));
    const attachments = input.attachments ?? [];
    const objective = [
      renderTemplate(this.options.prompt ?? SYNTHESIZER_PROMPT, {
        subtaskCount: input.subtasks.length,
        failedCount: failed.length,
      }),
      ...(failed.length ? ['', `Failed subtasks: ${failed.map((s) => `${s.id} "${s.title}"`).join(', ')}.`] : []),
      ...(attachments.length ? ['', `Attached files in the workspace: ${attachments.join(', ')}`] : []),
    ].join('\n');
    const result = await this.options.executor.run({
      runId: input.runId,
      purpose: 'synthesize',
      scope: 'synthesis',
      request: input.request,
      objective,
      priorState: renderCheckpoints(input.subtasks.map(toCheckpoint), errors),
      workspace: input.workspace,
      ...(input.signal ? { signal: input.signal } : {}),
      ...(input.maxIterations !== undefined ? { maxIterations: input.maxIterations } : {}),
      ...(input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {}),
    });
    return { status: result.status, deliverable: { answer: result.answer, files: [...result.files] }, executor: result };
  }
}
