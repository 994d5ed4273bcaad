/**
 * The official AgentIF-OneDay score of one task.
 * @module
 */

/** A criterion's points and whether it was satisfied (`null`: unjudged). */
export interface ScoredCriterion {
  score: number;
  satisfied: boolean | null;
}

/** A task's score and its parts. */
export interface TaskScore {
  /** max(0, gained) / possible, in [0, 1]; 0 when the rubric has no positive points. */
  score: number;
  /** Σ score of the satisfied criteria: bonus points earned minus penalties applied. */
  gained: number;
  /** Σ of the positive scores. */
  possible: number;
}

/**
 * Task score = max(0, Σ score of satisfied criteria) / Σ positive scores. A satisfied penalty criterion subtracts its
 * points; an unjudged criterion counts as not satisfied (no bonus, no penalty).
 */
export function scoreTask(criteria: readonly ScoredCriterion[]): TaskScore {
  const gained = criteria.reduce((sum, c) => sum + (c.satisfied === true ? c.score : 0), 0);
  const possible = criteria.reduce((sum, c) => sum + Math.max(0, c.score), 0);
  return { score: possible > 0 ? Math.max(0, gained) / possible : 0, gained, possible };
}
