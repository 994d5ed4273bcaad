/**
 * The repairer: a targeted ReAct loop that fixes the verifier's defects in the deliverable (purpose `repair`).
 * @module
 */
import { DEFAULTS } from '../defaults.js';
import { HarnessError } from '../errors.js';
import { renderDeliverable } from '../pipeline/checkpoints.js';
import type { ExecutorLike } from '../executor/types.js';
import { REPAIRER_PROMPT } from '../prompts/repairer.js';
import { renderTemplate } from '../prompts/template.js';
import type { RepairInput, RepairOutcome, RepairerLike } from '../pipeline/components.js';
import type { Deliverable } from '../pipeline/types.js';

/** Options of {@link Repairer}. */
export interface RepairerOptions {
  /** The executor that runs the repair loop. */
  executor: ExecutorLike;
  /** Repair instructions; `{{attempt}}` and `{{defects}}` are filled in. Default {@link REPAIRER_PROMPT}. */
  prompt?: string;
}

/**
 * Fixes the listed defects in the current deliverable with one executor loop; it never re-runs subtasks.
 *
 * @example
 * ```ts
 * const repairer = new Repairer({ executor });
 * const { deliverable } = await repairer.repair({ runId, request, deliverable, defects: verdict.defects, attempt: 1, workspace });
 * ```
 */
export class Repairer implements RepairerLike {
  private readonly options: RepairerOptions;

  constructor(options: RepairerOptions) {
    if (typeof options?.executor?.run !== 'function') {
      throw new HarnessError('invalid-options', 'Repairer needs `executor`: an object with run(input), e.g. an Executor.');
    }
    this.options = options;
  }

  /** Runs one repair loop. */
  async repair(input: RepairInput): Promise<RepairOutcome> {
    const defects = input.defects
      .map((d, i) => `${i + 1}. ${d.description}${d.artifact ? ` [file: ${d.artifact}]` : ''}`)
      .join('\n');
    const result = await this.options.executor.run({
      runId: input.runId,
      purpose: 'repair',
      scope: `repair-${input.attempt}`,
      request: input.request,
      objective: renderTemplate(this.options.prompt ?? REPAIRER_PROMPT, { attempt: input.attempt, defects }),
      priorState: renderDeliverable(input.deliverable),
      workspace: input.workspace,
      maxIterations: input.maxIterations ?? DEFAULTS.repairIterations,
      ...(input.signal ? { signal: input.signal } : {}),
      ...(input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {}),
    });
    const deliverable: Deliverable = {
      answer: result.answer.trim() ? result.answer : input.deliverable.answer,
      files: result.files.length ? [...result.files] : [...input.deliverable.files],
    };
    return { status: result.status, deliverable, executor: result };
  }
}
