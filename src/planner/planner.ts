/**
 * The planner: turns the original request into 1..maxSubtasks ordered subtasks, each naming the earlier ones it needs
 * (purpose `plan`).
 * @module
 */
import type { LlmBackend, Message } from '../backend/types.js';
import { DEFAULTS } from '../defaults.js';
import { HarnessError } from '../errors.js';
import type { EmitEvent } from '../events.js';
import {
  estimateRequestTokens,
  type CallSettings,
  type ModelCallContext,
  type RequestFitter,
  type RequestTokenCounter,
} from '../llm/call-model.js';
import type { PlanInput, PlanOutcome, PlannerLike } from '../contracts/roles.js';
import { capPlan, singleSubtask } from '../handoff/plan.js';
import {
  collectPreviews,
  DETAIL_STEPS,
  parseRoleOptions,
  PreviewOptionsSchema,
  previewSections,
  scaledPreviewBudget,
  sendShrinking,
  type CollectedPreview,
  type PreviewBudget,
} from '../memory/single-shot-previews.js';
import { DataMark } from '../prompts/datamark.js';
import { PLANNER_PROMPT, plannerFactValues, type PlannerFacts } from '../prompts/planner.js';
import { renderTemplate } from '../prompts/template.js';
import { askPlan } from './ask-plan.js';
import { withInstructions } from '../prompts/instructions.js';

/** Options of {@link Planner}. */
export interface PlannerOptions {
  backend: LlmBackend;
  /**
   * System prompt; `{{maxSubtasks}}` is filled in, and `{{agent}}` and `{{parallelism}}` from `facts`.
   * Default {@link PLANNER_PROMPT}.
   */
  prompt?: string;
  /** The application's instructions, appended to the prompt under a heading of their own. */
  instructions?: string;
  /**
   * What the run planned for is like (its tools, whether subtasks may run in parallel), so that
   * the prompt says only what is true of it; the harness passes them. A fact left out is said in words true of any run.
   */
  facts?: PlannerFacts;
  /** Characters of one attachment's preview. @defaultValue DEFAULTS.filePreviewChars (10 000) */
  previewChars?: number;
  /**
   * Characters of all attachment previews together (the paper's 20 000-token parser budget at ~4 characters per
   * token). Smaller when the request must shrink to fit the window.
   * @defaultValue DEFAULTS.fileParserTokens × 4 (80 000)
   */
  previewBudgetChars?: number;
  emit?: EmitEvent;
  countTokens?: RequestTokenCounter;
  /** Fits each request into the window (the harness passes its memory); requests go out unchanged without it. */
  fit?: RequestFitter;
  now?: () => number;
  /** Sampling, output reserve and usage observer of the calls (the harness passes the plan role's). */
  call?: CallSettings;
}

/**
 * Decomposes a request into ordered subtasks in the JSON protocol of ARCHITECTURE §3. Given the run's workspace, the
 * model sees bounded previews of the attachments, shrunk (down to names only) until the request fits the window. A
 * malformed reply is re-asked once with the validation error, then the whole request becomes a single subtask. A plan
 * of more than `maxSubtasks` subtasks is asked again once with the cap stated; only a second plan still too long is
 * cut to its first `maxSubtasks` (`fallback: 'truncated'`). A `dependsOn` that is not a list of earlier subtask indices
 * makes its subtask depend on every earlier one. The outcome's `reason` says what was re-asked, cut or distrusted.
 *
 * @example
 * ```ts
 * const planner = new Planner({ backend });
 * const { subtasks, fallback } = await planner.plan({ request: 'Compare three laptops and write compare.md' });
 * ```
 */
export class Planner implements PlannerLike {
  private readonly options: PlannerOptions;
  private readonly previews: PreviewBudget;

  constructor(options: PlannerOptions) {
    if (typeof options?.backend?.generate !== 'function') {
      throw new HarnessError('invalid-options', 'Planner needs `backend`: an LlmBackend with a generate() method.');
    }
    this.options = options;
    const { previewChars, previewBudgetChars } = parseRoleOptions('Planner', PreviewOptionsSchema, options);
    this.previews = { fileChars: previewChars, totalChars: previewBudgetChars };
  }

  /**
   * Plans the request. Backend errors (and aborts) propagate, and so does a `context-overflow` when the request cannot
   * fit even without previews; malformed replies fall back instead.
   */
  async plan(input: PlanInput): Promise<PlanOutcome> {
    const maxSubtasks = input.maxSubtasks ?? DEFAULTS.maxSubtasks;
    if (!Number.isInteger(maxSubtasks) || maxSubtasks < 1) {
      throw new HarnessError('invalid-input', `maxSubtasks must be an integer ≥ 1; got ${String(input.maxSubtasks)}.`);
    }
    const attachments = [...new Set(input.attachments ?? [])];
    const previews =
      input.workspace && attachments.length
        ? await collectPreviews(input.workspace, attachments, this.previews.fileChars)
        : undefined;
    const mark = input.dataMark ?? DataMark.random();
    const system: Message = {
      role: 'system',
      content: mark.withRule(
        withInstructions(
          renderTemplate(this.options.prompt ?? PLANNER_PROMPT, {
            maxSubtasks,
            ...plannerFactValues(this.options.facts ?? {}),
          }),
          this.options.instructions,
        ),
      ),
    };
    const context: ModelCallContext = {
      backend: this.options.backend,
      purpose: 'plan',
      runId: input.runId ?? 'plan',
      scope: 'plan',
      emit: this.options.emit,
      countTokens: this.options.countTokens,
      fit: this.options.fit,
      now: this.options.now,
      signal: input.signal,
      ...this.options.call,
    };
    const count = this.options.countTokens ?? estimateRequestTokens;
    const reply = await sendShrinking({
      purpose: 'plan',
      backend: this.options.backend,
      originalRequest: input.request,
      maxOutputTokens: context.maxOutputTokens,
      // Without previews there is nothing to shrink: the one request is also the minimum.
      steps: previews ? DETAIL_STEPS : [0],
      build: (detail): Message[] => [
        system,
        {
          role: 'user',
          content: planRequestText(input.request, attachments, previews, this.previews, detail, maxSubtasks, mark),
        },
      ],
      count: (messages) => count(messages, []),
      send: (messages) => askPlan(context, messages, maxSubtasks),
    });
    if (!reply.ok) {
      return {
        subtasks: [singleSubtask()],
        fallback: 'single-subtask',
        reason: `The plan reply was malformed after one re-ask (${reply.error}); running the request as one subtask.`,
      };
    }
    const capped = capPlan(reply.subtasks, maxSubtasks, reply.reAsked);
    return {
      subtasks: capped.subtasks,
      ...(capped.truncated ? { fallback: 'truncated' as const } : {}),
      ...(capped.reason ? { reason: capped.reason } : {}),
    };
  }
}

function planRequestText(
  request: string,
  attachments: readonly string[],
  previews: readonly CollectedPreview[] | undefined,
  budget: PreviewBudget,
  detail: number,
  maxSubtasks: number,
  mark: DataMark,
): string {
  const lines = ['Original request (verbatim):', request];
  if (previews) {
    const sectionsAt = (share: number): string =>
      previewSections(
        previews,
        scaledPreviewBudget(budget, share),
        'attachment not found in the workspace',
        mark,
      ).sections.join('\n\n');
    const sections = sectionsAt(detail);
    lines.push('', 'Attached files, available in the workspace (bounded previews; the agent can read them whole):', '');
    lines.push(sections);
    if (detail < 1 && sections !== sectionsAt(1))
      lines.push('', "The previews were shortened to fit the model's context window.");
  } else if (attachments.length) {
    lines.push('', `Attached files, available in the workspace: ${mark.names(attachments)}`);
  }
  lines.push('', `Plan at most ${maxSubtasks} subtasks. Reply with the JSON object only.`);
  return lines.join('\n');
}
