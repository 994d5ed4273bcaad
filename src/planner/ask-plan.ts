/**
 * Asking the model for a plan: the JSON reply re-asked once when malformed, and a plan over the cap asked again once
 * with the cap stated, so that a long plan is merged by the model rather than cut (a cut drops its last subtasks,
 * usually the final assembly).
 * @module
 */
import { z } from 'zod';
import type { Message } from '../backend/types.js';
import { askJson } from '../json/ask-json.js';
import { parseJsonReply } from '../json/parse-json-reply.js';
import { callModel, type ModelCallContext } from '../llm/call-model.js';
import type { PlanDraft } from '../handoff/plan.js';

const PlanReplySchema = z.object({
  subtasks: z
    .array(
      z.object({
        title: z.string().trim().min(1),
        objective: z.string().trim().min(1),
        expectedOutput: z.string().default(''),
        // Checked by capPlan, not here: a malformed dependsOn costs the parallelism, never the plan.
        dependsOn: z.unknown().optional(),
      }),
    )
    .min(1, 'the plan needs at least one subtask'),
});

/** A plan the model gave (still to be capped), or why it gave none. */
export type PlanReply =
  | {
      ok: true;
      subtasks: PlanDraft[];
      /** Set when the first plan was over the cap and asked again: what happened, for the plan's `reason`. */
      reAsked?: string;
    }
  | { ok: false; error: string };

/**
 * Sends `messages` for a plan. A malformed reply is re-asked once (see {@link askJson}); a plan of more than
 * `maxSubtasks` subtasks is asked again once in the same dialogue, stating the cap. The second plan is used when it is
 * well-formed, however long (the caller cuts it); a malformed second reply leaves the first plan to be cut.
 */
export async function askPlan(context: ModelCallContext, messages: Message[], maxSubtasks: number): Promise<PlanReply> {
  const first = await askJson(context, messages, PlanReplySchema);
  if (!first.ok) return { ok: false, error: first.error };
  const planned = first.value.subtasks;
  if (planned.length <= maxSubtasks) return { ok: true, subtasks: planned };
  const again = await callModel(context, {
    messages: [
      ...messages,
      { role: 'assistant', content: JSON.stringify(first.value) },
      { role: 'user', content: overCapMessage(planned.length, maxSubtasks) },
    ],
    responseFormat: { type: 'json' },
  });
  const second = parseJsonReply(again.message.content, PlanReplySchema);
  const before =
    `The planner returned ${planned.length} subtasks, more than limits.maxSubtasks (${maxSubtasks}); asked again ` +
    'with the cap stated, it';
  if (!second.ok) {
    return {
      ok: true,
      subtasks: planned,
      reAsked: `${before} gave no usable plan (${second.error.replace(/\.$/, '')}), so its first plan stands`,
    };
  }
  return { ok: true, subtasks: second.value.subtasks, reAsked: `${before} returned ${second.value.subtasks.length}` };
}

/** The re-ask of a plan over the cap. */
function overCapMessage(length: number, maxSubtasks: number): string {
  return (
    `Your plan has ${length} subtasks; the limit is ${maxSubtasks}. Merge related subtasks so that the plan has at ` +
    `most ${maxSubtasks}, still covering the whole request, its final assembly included. Reply again with only the ` +
    'JSON object in the required shape: no prose, no code fence.'
  );
}
