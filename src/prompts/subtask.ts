/**
 * The objective of an execute loop: of one subtask, the whole plan with this subtask marked, so "do only this part" can
 * be followed; without decomposition, the request itself, with no plan at all.
 * @module
 */
import type { PlannedSubtask } from '../contracts/work.js';
import type { DataMark } from './datamark.js';
import { SUBMIT_ANSWER_TOOL } from './executor.js';

/** What {@link renderSubtaskObjective} needs. */
export interface SubtaskObjectiveParts {
  plan: readonly PlannedSubtask[];
  /** Index of this subtask in `plan`. */
  index: number;
  /** Workspace-relative paths of the attachments. */
  attachments: readonly string[];
  /**
   * Indices in `plan` of the subtasks running at the same time as this attempt, in other loops (none when subtasks run
   * one at a time).
   */
  alongside?: readonly number[] | undefined;
  /** Why the previous attempt failed, from the second attempt on. */
  previousError?: string | undefined;
  /** The run's boundary of untrusted text (attachment names, error messages). */
  mark: DataMark;
}

/**
 * Renders the objective of subtask `index`: the whole plan (titles and expected outputs), then this subtask in full.
 * The planner wrote the plan after reading the request's attachments: it stays outside the data blocks, because it is
 * what the loop must do, with every marker-like sequence made inert.
 */
export function renderSubtaskObjective(parts: SubtaskObjectiveParts): string {
  const { plan, index, mark } = parts;
  const inert = (text: string) => mark.neutralize(text);
  const subtask = plan[index] as PlannedSubtask;
  const outline = plan.map((s, i) => {
    const marker = i === index ? '→' : ' ';
    const you = i === index ? '  ← THIS SUBTASK (yours)' : '';
    const expected = s.expectedOutput ? ` — expected output: ${inert(s.expectedOutput)}` : '';
    return `${marker} ${i + 1}. ${inert(s.title)}${expected}${you}`;
  });
  const lines = [
    `The plan for the original request has ${plan.length} subtask(s); other loops do the others:`,
    ...outline,
    '',
    `Subtask ${index + 1} of ${plan.length}: ${inert(subtask.title)}`,
    `Objective: ${inert(subtask.objective)}`,
    `Expected output: ${inert(subtask.expectedOutput)}`,
  ];
  const alongside = parts.alongside ?? [];
  if (alongside.length) {
    lines.push(
      `Running at the same time in other loops: ${alongside.map((i) => `subtask ${i + 1}`).join(', ')}. Their results ` +
        'are not available to you; do not write the files they are meant to produce.',
    );
  }
  if (parts.attachments.length) lines.push(`Attached files in the workspace: ${mark.names(parts.attachments)}`);
  if (parts.previousError) {
    lines.push(
      `A previous attempt at this subtask failed: ${mark.inline(parts.previousError)}. Avoid what made it fail.`,
    );
  }
  lines.push(
    'Do only this subtask, in service of the original request: later subtasks will do theirs. Finish by calling ' +
      `${SUBMIT_ANSWER_TOOL} with a concise answer and the workspace-relative paths of the files you produced.`,
  );
  return lines.join('\n');
}

/**
 * Renders the objective of the one loop of a run without decomposition (the paper's DIRECT): the whole request, its
 * answer and files the deliverable. Nothing in it speaks of a plan or of other loops.
 */
export function renderDirectObjective(parts: { attachments: readonly string[]; mark: DataMark }): string {
  const objective =
    'Carry out the original request completely: your answer and the files you produce are the deliverable.';
  if (!parts.attachments.length) return objective;
  return `${objective}\nAttached files in the workspace: ${parts.mark.names(parts.attachments)}`;
}
