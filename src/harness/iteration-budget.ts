/**
 * The run's ReAct iteration budget, shared by every loop, with shares held back so that synthesis and one repair
 * always remain possible and no subtask starves the ones after it. Pure arithmetic; the run books what loops used.
 * @module
 */
import { DEFAULTS } from '../defaults.js';

/** What the budget is sized for. */
export interface IterationBudgetShape {
  /** `limits.maxIterations`. */
  total: number;
  /** Subtasks in the plan. */
  subtasks: number;
  /** Whether a repair can follow (verification on and `limits.repairAttempts` ≥ 1). */
  repairs: boolean;
  /** Shares of `total` held back per stage. @defaultValue DEFAULTS.iterationReserve */
  reserve?: { synthesize: number; repair: number };
}

/**
 * Iterations per stage: the execute stage may use `total` less the synthesis and repair reserves; a subtask may use
 * what the execute stage has left less half a fair share for each subtask after it; synthesis may use everything
 * left but the repair reserve; a repair everything left.
 */
export class IterationBudget {
  private used = 0;
  private readonly synthesisReserve: number;
  private readonly repairReserve: number;
  private readonly executeBudget: number;
  private readonly keepPerLaterSubtask: number;

  constructor(private readonly shape: IterationBudgetShape) {
    const reserve = shape.reserve ?? DEFAULTS.iterationReserve;
    // One subtask that completes is the deliverable; synthesis runs only when it did not, from what is left.
    this.synthesisReserve = shape.subtasks > 1 ? Math.floor(shape.total * reserve.synthesize) : 0;
    this.repairReserve = shape.repairs ? Math.floor(shape.total * reserve.repair) : 0;
    this.executeBudget = Math.max(1, shape.total - this.synthesisReserve - this.repairReserve);
    this.keepPerLaterSubtask = Math.floor(this.executeBudget / Math.max(1, shape.subtasks) / 2);
  }

  /** Iterations not yet used by any loop. */
  get left(): number {
    return Math.max(0, this.shape.total - this.used);
  }

  /** Iterations an attempt of subtask `index` may use (0: none left for it). */
  forSubtask(index: number): number {
    const later = Math.max(0, this.shape.subtasks - index - 1);
    return Math.max(0, Math.min(this.left, this.executeBudget - this.used - later * this.keepPerLaterSubtask));
  }

  /** Iterations the synthesis loop may use. */
  forSynthesis(): number {
    return Math.max(0, this.left - this.repairReserve);
  }

  /** Iterations a repair loop may use, at most `limit` (`limits.repairIterations`). */
  forRepair(limit: number): number {
    return Math.min(limit, this.left);
  }

  /** Books iterations a loop used. */
  spend(iterations: number): void {
    this.used += Math.max(0, iterations);
  }
}
