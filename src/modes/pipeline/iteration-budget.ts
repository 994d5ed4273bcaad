/**
 * The run's ReAct iteration budget, shared by every loop, with shares held back so that synthesis and one repair
 * always remain possible and no subtask starves the ones after it. Pure arithmetic; the run books what loops used.
 * @module
 */
import { DEFAULTS } from '../../defaults.js';

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
 * Iterations per stage: the execute stage may use `total` less the synthesis and repair reserves; a subtask attempt
 * may use what the execute stage has left (less what the attempts running beside it hold) less half a fair share for
 * each subtask not started yet; synthesis may use everything left but the repair reserve; a repair everything left.
 * An attempt holds its allowance until it ends, so attempts running at the same time can never use more together
 * than the stage has.
 */
export class IterationBudget {
  private used = 0;
  /** Allowances of the attempts running now. */
  private held = 0;
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

  /**
   * Takes the allowance of a subtask attempt (0: none left for it) and holds it until {@link IterationBudget.release}.
   * @param waiting subtasks of the plan not started yet, this one not counted
   * @param sharing subtasks starting together that share what is free, this one included: the first of two gets half,
   * the second the rest (1 when subtasks run one at a time)
   */
  takeForSubtask(waiting: number, sharing = 1): number {
    const starting = Math.max(1, sharing);
    const kept = Math.max(0, waiting - (starting - 1)) * this.keepPerLaterSubtask;
    const free = this.executeBudget - this.used - this.held - kept;
    const allowance = Math.max(0, Math.min(this.left - this.held, Math.floor(free / starting)));
    this.held += allowance;
    return allowance;
  }

  /** Gives back an allowance taken by {@link IterationBudget.takeForSubtask}; what the attempt used is booked apart. */
  release(allowance: number): void {
    this.held = Math.max(0, this.held - allowance);
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
