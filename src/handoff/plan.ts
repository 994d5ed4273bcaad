/**
 * Plan-level rules shared by the planner and the harness.
 * @module
 */
import type { PlannedSubtask } from '../contracts/work.js';

/** The one subtask that stands for the whole request (decomposition off, or a plan fallback). */
export function singleSubtask(): PlannedSubtask {
  return {
    id: 'subtask-1',
    title: 'Complete the request',
    objective: 'Carry out the original request completely and produce its final deliverable.',
    expectedOutput: 'The final answer and every file the request asks for.',
  };
}

/** A subtask as a planner returns it: `dependsOn` not yet checked (the model may send anything there). */
export type PlanDraft = Omit<PlannedSubtask, 'id' | 'dependsOn'> & { id?: string; dependsOn?: unknown };

/**
 * Keeps at most `maxSubtasks` subtasks, numbers them `subtask-1`, `subtask-2`, … in plan order and normalises each
 * `dependsOn` (see {@link normaliseDependsOn}); says why when it dropped subtasks (`truncated`) or distrusted a
 * `dependsOn`.
 * @param history how the planner came by this plan when it took more than one reply (a plan over the cap asked again),
 * said first in the reason
 */
export function capPlan(
  subtasks: readonly PlanDraft[],
  maxSubtasks: number,
  history?: string,
): { subtasks: PlannedSubtask[]; truncated: boolean; reason?: string } {
  const reasons: string[] = [];
  const kept = subtasks.slice(0, maxSubtasks).map((s, i): PlannedSubtask => {
    const dependsOn = normaliseDependsOn(s.dependsOn, i);
    if (dependsOn === 'invalid') {
      reasons.push(
        `subtask ${i} listed ${JSON.stringify(s.dependsOn)} in dependsOn, which is not a list of earlier subtask ` +
          'indices; it depends on every earlier subtask instead',
      );
    }
    return {
      id: `subtask-${i + 1}`,
      title: s.title,
      objective: s.objective,
      expectedOutput: s.expectedOutput,
      ...(Array.isArray(dependsOn) ? { dependsOn } : {}),
    };
  });
  const truncated = subtasks.length > maxSubtasks;
  if (truncated) {
    reasons.unshift(
      history
        ? `${history}; kept the first ${maxSubtasks}`
        : `The planner returned ${subtasks.length} subtasks; kept the first ${maxSubtasks} (limits.maxSubtasks)`,
    );
  } else if (history) {
    reasons.unshift(history);
  }
  return reasons.length
    ? { subtasks: kept, truncated, reason: `${reasons.join('; ')}.` }
    : { subtasks: kept, truncated };
}

/**
 * The `dependsOn` of subtask `index`: integer indices of earlier subtasks, de-duplicated and ascending; `undefined`
 * when absent (or null), and `'invalid'` when it is anything else (not a list, or an entry that is no earlier index:
 * the subtask then depends on every earlier one, which is always safe).
 */
export function normaliseDependsOn(value: unknown, index: number): number[] | undefined | 'invalid' {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) return 'invalid';
  const earlier = (entry: unknown): entry is number =>
    Number.isInteger(entry) && (entry as number) >= 0 && (entry as number) < index;
  if (!value.every(earlier)) return 'invalid';
  return [...new Set(value)].sort((a, b) => a - b);
}
