/**
 * What every stage of one managed run shares: its options, stop control, roles, progress and data boundary, the
 * iteration budget over its loops, and how it saves (the task-state file and the snapshots a resume goes on from).
 * @module
 */
import type { LoopCheckpoint } from '../../durability/types.js';
import type { EmitEvent, HarnessEvent } from '../../events.js';
import { DataMark } from '../../prompts/datamark.js';
import { IterationBudget } from '../shared/iteration-budget.js';
import { parseManagedOptions, type ResolvedManagedOptions } from '../shared/managed-options.js';
import { ManagedProgress } from './progress.js';
import { tallyManagedEvent } from './report.js';
import type { ManagedRunInit, RunControlLike } from './run-init.js';
import { pendingLoop, readManagedState, type ManagedPosition } from './snapshot.js';
import { saveTaskState } from './state.js';
import { discardTraces } from './traces.js';
import { wireRoles, type ManagedRoles } from './wiring.js';

/** One managed run's shared state and its saving; the stages (`loop.ts`, `execute-stage.ts`, `audit-stage.ts`) act on it. */
export class ManagedRunContext<Tally = unknown> {
  readonly o: ResolvedManagedOptions;
  readonly control: RunControlLike;
  readonly roles: ManagedRoles;
  readonly mark: DataMark;
  /** Folds every event of the run into both report tallies, then sends it. */
  readonly emit: EmitEvent;
  readonly p: ManagedProgress;
  private readonly startedAt: number;
  /** Time the run used before this resume. */
  private readonly usedBefore: number;
  /** `limits.maxRunIterations` over every executor and audit loop of the run, resumed ones included. */
  private readonly budget: IterationBudget;
  /** The saved executor loop a resumed execution goes on from, until it is taken. */
  private savedLoop: LoopCheckpoint | undefined;

  constructor(readonly init: ManagedRunInit<Tally>) {
    this.o = parseManagedOptions(init.options);
    this.control = init.control;
    this.startedAt = init.now();
    this.usedBefore = init.resume?.used.elapsedMs ?? 0;
    this.p = init.resume ? ManagedProgress.restore(readManagedState(init.resume.state)) : new ManagedProgress();
    this.savedLoop = init.resume ? pendingLoop(init.resume, this.p.at) : undefined;
    this.budget = new IterationBudget(init.limits.maxRunIterations);
    this.budget.spend(this.p.iterationsUsed);
    this.mark = init.dataMark ?? (init.resume ? new DataMark(init.resume.dataMark) : DataMark.random());
    this.emit = (event) => {
      // Stamped here so that the folds see events as listeners do (the host's emit stamps it again, same clock).
      const stamped = { ...event, timestamp: init.now() } as HarnessEvent;
      init.baseReport.add(stamped);
      tallyManagedEvent(this.p.tally, stamped);
      init.emit(stamped);
    };
    this.roles = wireRoles(this.o, {
      runId: init.runId,
      workspace: init.workspace,
      emit: this.emit,
      now: init.now,
      signal: this.control.controller.signal,
      backendFor: init.backendFor,
      samplingFor: init.samplingFor,
      maxOutputTokens: init.maxOutputTokens,
      memory: init.memory,
      registry: init.registry,
      context: init.context,
      limits: init.limits,
      verifier: init.verifier,
      instructions: init.instructions ?? {},
    });
  }

  /** The saved loop the resumed execution goes on from; it is taken once. */
  takeSavedLoop(): LoopCheckpoint | undefined {
    const loop = this.savedLoop;
    this.savedLoop = undefined;
    return loop;
  }

  /** The saved loop a resume announces, without taking it. */
  get pendingLoop(): LoopCheckpoint | undefined {
    return this.savedLoop;
  }

  // ---- budgets ----

  /**
   * The iterations a role's loop may use this round: its own bound, at most `limits.maxIterations`, and no more than
   * `limits.maxRunIterations` has left. With none left the run stops (`budget-exhausted`) before the loop starts.
   */
  loopAllowance(roleBound: number, stage: string): number {
    const allowance = this.budget.allowance(Math.min(roleBound, this.init.limits.maxIterations));
    if (allowance < 1) this.control.stop('budget');
    this.control.check(stage);
    return allowance;
  }

  spend(iterations: number): void {
    this.p.iterationsUsed += iterations;
    this.budget.spend(iterations);
  }

  /**
   * Deletes the saved tool outputs of every loop but `keep`'s (see `traces.ts`). A failure ends the run from `stage`:
   * a trace that could not be deleted would be readable by the next role.
   */
  discardTraces(stage: string, keep: readonly string[] = []): Promise<void> {
    return this.control.guard(stage, () => discardTraces(this.init.workspace.root, keep));
  }

  elapsed(): number {
    return this.usedBefore + Math.max(0, this.init.now() - this.startedAt);
  }

  // ---- saving ----

  /** The copy of the task state for people to read (`.harness/task-state.json`); resumes read the snapshot. */
  saveStateFile(scope: string): Promise<void> {
    return saveTaskState(this.init.workspace, this.p.state, scope);
  }

  /** Goes to the next position and saves it; a store that fails ends the run from `stage`. */
  async moveTo(stage: string, next: ManagedPosition): Promise<void> {
    this.p.at = next;
    await this.control.guard(stage, () => this.checkpoint());
  }

  /**
   * Saves a snapshot of the run as it stands, with the executor loop in progress when there is one. Nothing is saved
   * once the run has stopped: an aborted run goes on from where it was, not from its wind-down (a cut-off tool call
   * or audit is then re-done or reported as interrupted, never taken as finished).
   */
  checkpoint(loop?: LoopCheckpoint): Promise<void> {
    const checkpointer = this.init.checkpointer;
    if (!checkpointer || this.control.stopped) return Promise.resolve();
    const state = this.p.toSnapshot(this.init.attachments, this.init.baseReport.tally);
    const used = { iterations: this.p.iterationsUsed + (loop?.iterations ?? 0), elapsedMs: this.elapsed() };
    // Managed mode runs one executor loop at a time.
    return checkpointer.save({ state, used, ...(loop ? { loops: [loop] } : {}) });
  }
}
