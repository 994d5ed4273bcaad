/**
 * The planner: turns the original request into 1..maxSubtasks ordered subtasks (purpose `plan`).
 * @module
 */
import { z } from 'zod';
import type { LlmBackend, Message } from '../backend/types.js';
import { DEFAULTS } from '../defaults.js';
import { HarnessError } from '../errors.js';
import type { EmitEvent } from '../events.js';
import type { PlannedSubtask } from '../pipeline/types.js';
import { askJson } from '../json/ask-json.js';
import type { RequestFitter, RequestTokenCounter } from '../llm/call-model.js';
import { PLANNER_PROMPT } from '../prompts/planner.js';
import { renderTemplate } from '../prompts/template.js';
import type { PlanInput, PlanOutcome, PlannerLike } from '../pipeline/components.js';

const PlanReplySchema = z.object({
  subtasks: z
    .array(
      z.object({
        title: z.string().trim().min(1),
        objective: z.string().trim().min(1),
        expectedOutput: z.string().default(''),
      }),
    )
    .min(1, 'the plan needs at least one subtask'),
});

/** Options of {@link Planner}. */
export interface PlannerOptions {
  backend: LlmBackend;
  /** System prompt; `{{maxSubtasks}}` is filled in. Default {@link PLANNER_PROMPT}. */
  prompt?: string;
  emit?: EmitEvent;
  countTokens?: RequestTokenCounter;
  /** Fits each request into the window (the harness passes its memory); requests go out unchanged without it. */
  fit?: RequestFitter;
  now?: () => number;
}

/**
 * Decomposes a request into ordered subtasks in the JSON protocol of ARCHITECTURE §3. A malformed reply is
 * re-asked once with the validation error, then the whole request becomes a single subtask.
 *
 * @example
 * ```ts
 * const planner = new Planner({ backend });
 * const { subtasks, fallback } = await planner.plan({ request: 'Compare three laptops and write compare.md' });
 * ```
 */
export class Planner implements PlannerLike {
  private readonly options: PlannerOptions;

  constructor(options: PlannerOptions) {
    if (typeof options?.backend?.generate !== 'function') {
      throw new HarnessError('invalid-options', 'Planner needs `backend`: an LlmBackend with a generate() method.');
    }
    this.options = options;
  }

  /** Plans the request. Backend errors (and aborts) propagate; malformed replies fall back instead. */
  async plan(input: PlanInput): Promise<PlanOutcome> {
    const maxSubtasks = input.maxSubtasks ?? DEFAULTS.maxSubtasks;
    if (!Number.isInteger(maxSubtasks) || maxSubtasks < 1) {
      throw new HarnessError('invalid-input', `maxSubtasks must be an integer ≥ 1; got ${String(input.maxSubtasks)}.`);
    }
    const system = renderTemplate(this.options.prompt ?? PLANNER_PROMPT, { maxSubtasks });
    const messages: Message[] = [
      { role: 'system', content: system },
      { role: 'user', content: planRequestText(input.request, input.attachments ?? [], maxSubtasks) },
    ];
    const reply = await askJson(
      {
        backend: this.options.backend,
        purpose: 'plan',
        runId: input.runId ?? 'plan',
        scope: 'plan',
        emit: this.options.emit,
        countTokens: this.options.countTokens,
        fit: this.options.fit,
        now: this.options.now,
        signal: input.signal,
      },
      messages,
      PlanReplySchema,
    );
    if (!reply.ok) {
      return {
        subtasks: [singleSubtask()],
        fallback: 'single-subtask',
        reason: `The plan reply was malformed after one re-ask (${reply.error}); running the request as one subtask.`,
      };
    }
    const all = reply.value.subtasks.map((s, i) => ({
      id: `subtask-${i + 1}`,
      title: s.title,
      objective: s.objective,
      expectedOutput: s.expectedOutput,
    }));
    if (all.length > maxSubtasks) {
      return {
        subtasks: all.slice(0, maxSubtasks),
        fallback: 'truncated',
        reason: `The planner returned ${all.length} subtasks; kept the first ${maxSubtasks} (limits.maxSubtasks).`,
      };
    }
    return { subtasks: all };
  }
}

/** The one subtask that stands for the whole request (decomposition off, or a plan fallback). */
export function singleSubtask(): PlannedSubtask {
  return {
    id: 'subtask-1',
    title: 'Complete the request',
    objective: 'Carry out the original request completely and produce its final deliverable.',
    expectedOutput: 'The final answer and every file the request asks for.',
  };
}

function planRequestText(request: string, attachments: readonly string[], maxSubtasks: number): string {
  const lines = ['Original request (verbatim):', request];
  if (attachments.length) {
    lines.push('', 'Attached files, available in the workspace:', ...attachments.map((a) => `- ${a}`));
  }
  lines.push('', `Plan at most ${maxSubtasks} subtasks. Reply with the JSON object only.`);
  return lines.join('\n');
}
