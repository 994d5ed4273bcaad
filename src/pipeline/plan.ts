/**
 * Plan-level rules shared by the planner and the harness.
 * @module
 */
import type { PlannedSubtask } from './types.js';

/** The one subtask that stands for the whole request (decomposition off, or a plan fallback). */
export function singleSubtask(): PlannedSubtask {
  return {
    id: 'subtask-1',
    title: 'Complete the request',
    objective: 'Carry out the original request completely and produce its final deliverable.',
    expectedOutput: 'The final answer and every file the request asks for.',
  };
}

/**
 * Keeps at most `maxSubtasks` subtasks and numbers them `subtask-1`, `subtask-2`, … in plan order; says why when it
 * dropped any.
 */
export function capPlan(
  subtasks: ReadonlyArray<Omit<PlannedSubtask, 'id'> & { id?: string }>,
  maxSubtasks: number,
): { subtasks: PlannedSubtask[]; reason?: string } {
  const kept = subtasks.slice(0, maxSubtasks).map((s, i) => ({
    id: `subtask-${i + 1}`,
    title: s.title,
    objective: s.objective,
    expectedOutput: s.expectedOutput,
  }));
  if (subtasks.length <= maxSubtasks) return { subtasks: kept };
  return {
    subtasks: kept,
    reason: `The planner returned ${subtasks.length} subtasks; kept the first ${maxSubtasks} (limits.maxSubtasks).`,
  };
}
