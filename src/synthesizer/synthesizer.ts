/**
 * The synthesizer: turns subtask answers and files into the candidate deliverable (purpose `synthesize`).
 * @module
 */
import { HarnessError } from '../errors.js';
import { renderRecords } from '../handoff/checkpoints.js';
import type { ExecutorLike } from '../contracts/executor.js';
import { DataMark } from '../prompts/datamark.js';
import { FAILED_SUBTASKS_NOTE, SYNTHESIZER_PROMPT } from '../prompts/synthesizer.js';
import { renderTemplate } from '../prompts/template.js';
import type { SynthesisOutcome, SynthesizeInput, SynthesizerLike } from '../contracts/roles.js';
import type { SubtaskRecord } from '../contracts/work.js';
import { withInstructions } from '../prompts/instructions.js';

/** Options of {@link Synthesizer}. */
export interface SynthesizerOptions {
  /** The executor that runs the synthesis loop; give it the backend and tools synthesis may use. */
  executor: ExecutorLike;
  /** Synthesis instructions; `{{subtaskCount}}` and `{{failedCount}}` are filled in. Default {@link SYNTHESIZER_PROMPT}. */
  prompt?: string;
  /** The application's instructions, appended to the prompt under a heading of their own. */
  instructions?: string;
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
      throw new HarnessError(
        'invalid-options',
        'Synthesizer needs `executor`: an object with run(input), e.g. an Executor.',
      );
    }
    this.options = options;
  }

  /** Synthesizes the candidate deliverable. */
  async synthesize(input: SynthesizeInput): Promise<SynthesisOutcome> {
    const failed = input.subtasks.filter((s) => s.status !== 'completed');
    const attachments = input.attachments ?? [];
    const mark = input.dataMark ?? DataMark.random();
    const objective = [
      withInstructions(
        renderTemplate(this.options.prompt ?? SYNTHESIZER_PROMPT, {
          subtaskCount: input.subtasks.length,
          failedCount: failed.length,
        }),
        this.options.instructions,
      ),
      ...(failed.length
        ? [
            '',
            renderTemplate(FAILED_SUBTASKS_NOTE, {
              failedCount: failed.length,
              failed: failed.map((s) => `${s.id} "${mark.neutralize(s.title)}"`).join(', '),
            }),
          ]
        : []),
      ...renderWriteConflicts(input.subtasks, mark),
      ...(attachments.length ? ['', `Attached files in the workspace: ${mark.names(attachments)}`] : []),
    ].join('\n');
    const result = await this.options.executor.run({
      runId: input.runId,
      purpose: 'synthesize',
      scope: 'synthesis',
      request: input.request,
      objective,
      priorState: renderRecords(input.subtasks, mark),
      dataMark: mark,
      workspace: input.workspace,
      ...(input.signal ? { signal: input.signal } : {}),
      ...(input.maxIterations !== undefined ? { maxIterations: input.maxIterations } : {}),
      ...(input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {}),
    });
    return {
      status: result.status,
      deliverable: { answer: result.answer, files: [...result.files] },
      executor: result,
    };
  }
}

/**
 * The lines that tell synthesis which files subtasks running at the same time both wrote: the file holds the last
 * writer's version, and the other writers' answers may describe content that is gone.
 */
function renderWriteConflicts(subtasks: readonly SubtaskRecord[], mark: DataMark): string[] {
  const conflicts = subtasks.flatMap((s) => s.writeConflicts ?? []);
  if (!conflicts.length) return [];
  return [
    '',
    'Files written by subtasks that ran at the same time (the later write replaced the earlier one):',
    ...conflicts.map(
      ({ path, writers }) =>
        `- ${mark.names([path])}: written by ${writers.join(', then ')}; it holds ${writers.at(-1)}'s version.`,
    ),
    "Check each of these files against all its writers' answers, and restore what the replaced versions held " +
      'where the deliverable needs it.',
  ];
}
