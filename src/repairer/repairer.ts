/**
 * The repairer: a targeted ReAct loop that fixes the verifier's defects in the deliverable (purpose `repair`).
 * @module
 */
import { DEFAULTS } from '../defaults.js';
import { HarnessError } from '../errors.js';
import { renderDeliverable, renderRecords } from '../handoff/checkpoints.js';
import type { ExecutorLike } from '../contracts/executor.js';
import { DataMark } from '../prompts/datamark.js';
import { FIXED_DEFECTS_NOTE, REPAIR_MATERIAL_NOTE, REPAIRER_PROMPT } from '../prompts/repairer.js';
import { renderTemplate } from '../prompts/template.js';
import type { RepairInput, RepairOutcome, RepairerLike } from '../contracts/roles.js';
import type { Defect, Deliverable } from '../contracts/work.js';
import type { Workspace } from '../workspace/types.js';
import { withInstructions } from '../prompts/instructions.js';

/** Options of {@link Repairer}. */
export interface RepairerOptions {
  /** The executor that runs the repair loop. */
  executor: ExecutorLike;
  /** Repair instructions; `{{attempt}}` and `{{defects}}` are filled in. Default {@link REPAIRER_PROMPT}. */
  prompt?: string;
  /** The application's instructions, appended to the prompt under a heading of their own. */
  instructions?: string;
}

/**
 * Fixes the listed defects in the current deliverable with one executor loop, shown the subtasks' checkpoints as
 * material and the defects earlier repairs fixed (to keep them fixed); it never re-runs subtasks.
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
      throw new HarnessError(
        'invalid-options',
        'Repairer needs `executor`: an object with run(input), e.g. an Executor.',
      );
    }
    this.options = options;
  }

  /**
   * Runs one repair loop. A loop that did not complete leaves the deliverable as it was; one that completed is
   * merged into it (see {@link mergeRepair}).
   */
  async repair(input: RepairInput): Promise<RepairOutcome> {
    const mark = input.dataMark ?? DataMark.random();
    const subtasks = input.subtasks ?? [];
    const fixed = input.fixedDefects ?? [];
    const objective = [
      withInstructions(
        renderTemplate(this.options.prompt ?? REPAIRER_PROMPT, {
          attempt: input.attempt,
          defects: defectList(input.defects, mark),
        }),
        this.options.instructions,
      ),
      ...(subtasks.length ? ['', REPAIR_MATERIAL_NOTE] : []),
      ...(fixed.length ? ['', renderTemplate(FIXED_DEFECTS_NOTE, { fixed: defectList(fixed, mark) })] : []),
    ].join('\n');
    const priorState = [renderDeliverable(input.deliverable, mark), renderRecords(subtasks, mark)]
      .filter((part) => part !== '')
      .join('\n\n');
    const existedBefore = await existing(input.workspace, input.deliverable.files);
    const result = await this.options.executor.run({
      runId: input.runId,
      purpose: 'repair',
      scope: `repair-${input.attempt}`,
      request: input.request,
      objective,
      priorState,
      dataMark: mark,
      workspace: input.workspace,
      maxIterations: input.maxIterations ?? DEFAULTS.repairIterations,
      ...(input.signal ? { signal: input.signal } : {}),
      ...(input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {}),
    });
    if (result.status !== 'completed')
      return { status: result.status, deliverable: input.deliverable, executor: result };
    const stillThere = await existing(input.workspace, existedBefore);
    return {
      status: result.status,
      deliverable: mergeRepair(input.deliverable, result, { existedBefore, stillThere }),
      executor: result,
    };
  }
}

/**
 * A completed repair merged into the deliverable it repaired: its answer replaces the answer only when it gives one;
 * its files are added to the deliverable's; a delivered file that existed before the repair and is gone after it
 * (the repair deleted it) leaves the list. A claimed file that never existed stays, so its defect stays visible.
 */
export function mergeRepair(
  previous: Deliverable,
  repair: { answer: string; files: readonly string[] },
  files: { existedBefore: ReadonlySet<string>; stillThere: ReadonlySet<string> },
): Deliverable {
  const { existedBefore, stillThere } = files;
  const kept = previous.files.filter((file) => !existedBefore.has(file) || stillThere.has(file));
  return {
    answer: repair.answer.trim() ? repair.answer : previous.answer,
    files: [...new Set([...kept, ...repair.files])],
  };
}

/**
 * Defects as a numbered list. They are the verifier's instructions, so they stay outside the data blocks; what they
 * quote of untrusted content cannot forge a marker there, and the file they name is marked.
 */
function defectList(defects: readonly Defect[], mark: DataMark): string {
  return defects
    .map(
      (d, i) => `${i + 1}. ${mark.neutralize(d.description)}${d.artifact ? ` [file: ${mark.inline(d.artifact)}]` : ''}`,
    )
    .join('\n');
}

async function existing(workspace: Workspace, files: Iterable<string>): Promise<Set<string>> {
  const present = new Set<string>();
  for (const file of new Set(files)) if (await workspace.exists(file)) present.add(file);
  return present;
}
