/**
 * The ReAct iterations a loop may use: its own bound (`limits.maxIterations` for a subtask attempt and for
 * synthesis, `limits.repairIterations` for a repair), and, when `limits.maxRunIterations` is set, no more than the run
 * has left of that cap. Pure arithmetic; the run books what loops used.
 * @module
 */

/**
 * The run's optional cap over all its loops. Without a cap every loop gets its whole bound, whatever the loops before
 * it used. With one, a loop gets its bound or what the cap has left, whichever is less; an allowance is held until
 * the loop ends, so loops running at the same time can never use more together than the cap has left.
 */
export class IterationBudget {
  private used = 0;
  /** Allowances of the loops running now. */
  private held = 0;

  /** @param cap `limits.maxRunIterations`; undefined: no cap */
  constructor(private readonly cap: number | undefined) {}

  /** Iterations of the cap neither used nor held by a running loop (Infinity without a cap). */
  get left(): number {
    return this.cap === undefined ? Number.POSITIVE_INFINITY : Math.max(0, this.cap - this.used - this.held);
  }

  /** What a loop bounded by `bound` may use: its bound, or what the cap has left when that is less (0: used up). */
  allowance(bound: number): number {
    return Math.max(0, Math.min(bound, this.left));
  }

  /**
   * Takes the allowance of a loop that may run beside others (a subtask attempt) and holds it until
   * {@link IterationBudget.release}.
   */
  take(bound: number): number {
    const allowance = this.allowance(bound);
    if (this.cap !== undefined) this.held += allowance;
    return allowance;
  }

  /** Gives back an allowance taken by {@link IterationBudget.take}; what the loop used is booked apart. */
  release(allowance: number): void {
    if (this.cap !== undefined) this.held = Math.max(0, this.held - allowance);
  }

  /** Books iterations a loop used. */
  spend(iterations: number): void {
    this.used += Math.max(0, iterations);
  }
}
