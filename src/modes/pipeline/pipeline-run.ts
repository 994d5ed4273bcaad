/**
 * One run of the OneDayAgent pipeline: intake → plan → execute → synthesize → verify → repair, then the typed output
 * when `run({ output })` asks for one. All per-run state lives in one {@link PipelineState}, saved through the run's
 * checkpointer at every stage change and inside every executor loop, so that a resumed run goes on where its
 * snapshot stopped; stopping is {@link RunControl}'s job, the iteration allowances {@link IterationBudget}'s, the roles
 * {@link RoleWiring}'s and the result {@link assembleResult}'s.
 * @module
 */
import { runEventSender } from '../../event-bus.js';
import type { EmitEvent, RunStartEvent } from '../../events.js';
import { LoopResumer } from '../../durability/loop-resumer.js';
import { resumeRedo } from '../../executor/resume-redo.js';
import type { RunSnapshot } from '../../durability/types.js';
import { HarnessError, toHarnessError } from '../../errors.js';
import type { ExecutorResult } from '../../contracts/executor.js';
import { MemoryManager } from '../../memory/memory-manager.js';
import { partialDeliverable, withInterruptedCalls } from '../../handoff/checkpoints.js';
import { capPlan, singleSubtask } from '../../handoff/plan.js';
import type { PlannedSubtask, RunResult, SubtaskRecord } from '../../contracts/work.js';
import { DataMark } from '../../prompts/datamark.js';
import type { Workspace } from '../../workspace/types.js';
import { executeStage } from './execute-stage.js';
import { outputStage } from './output-stage.js';
import { copyAttachments } from '../shared/intake.js';
import { IterationBudget } from '../shared/iteration-budget.js';
import { memoryThresholdsOf } from '../shared/memory-thresholds.js';
import type { ResolvedHarnessOptions } from '../shared/options.js';
import { isPipelineState, stageOf, type PipelineState } from './pipeline-state.js';
import { newReportTally, tallyEvent } from '../shared/report.js';
import { RoleWiring } from '../shared/role-wiring.js';
import { RunControl, StopRun } from '../shared/run-control.js';
import { assembleResult } from '../shared/run-result.js';
import { typedResultSkipped, type TypedResult } from '../shared/typed-result.js';
import type { ModeRunInit } from '../shared/run-init.js';
import type { StageContext } from './stage-context.js';
import { recordSubtaskWrites } from './subtask-schedule.js';
import { verifyStage } from './verify-stage.js';

/** One run of the pipeline; its stages see it as a {@link StageContext}. @internal */
export class PipelineRun implements StageContext {
  readonly o: ResolvedHarnessOptions;
  readonly s: PipelineState;
  readonly runId: string;
  readonly task: string;
  readonly workspace: Workspace;
  readonly emit: EmitEvent;
  readonly control: RunControl;
  readonly roles: RoleWiring;
  private readonly loops: LoopResumer;
  /** The memory's thresholds, for `run-start`. */
  private readonly thresholds: Pick<RunStartEvent, 'memory'>;
  private readonly startedAt: number;
  /** Run time used before this process took the run up (a resumed run's). */
  private readonly elapsedBefore: number;
  readonly budget: IterationBudget;
  /** Iterations booked by ended loops. */
  private spent: number;
  /** This run's boundary of untrusted text in every prompt. */
  readonly mark: DataMark;
  /** The store error that stopped the run, once a save failed. */
  private storeFailure: HarnessError | undefined;
  /** The typed result of `run({ output })`, once asked for. */
  private typed: TypedResult | undefined;

  constructor(private readonly init: ModeRunInit) {
    this.o = init.options;
    this.runId = init.runId;
    this.task = init.task;
    this.workspace = init.workspace;
    const saved = init.resume;
    if (saved && !isPipelineState(saved.state)) {
      throw new HarnessError('resume-incompatible', `The snapshot of run "${init.runId}" holds no pipeline state.`);
    }
    this.s = saved ? (saved.state as PipelineState) : freshState();
    this.mark = init.dataMark ?? DataMark.random();
    this.startedAt = init.now();
    this.elapsedBefore = saved?.used.elapsedMs ?? 0;
    this.spent = saved?.used.iterations ?? 0;
    this.emit = runEventSender(
      init.bus,
      init.now,
      (event) => {
        tallyEvent(this.s.tally, event);
        recordSubtaskWrites(this.s.writes, event);
      },
      init.numbering,
    );
    this.control = new RunControl(this.o.limits, this.elapsedBefore);
    // A save in flight when the run stops (abort, close, time limit) must not hold it: the store may never answer.
    init.checkpointer?.stopOn?.(this.control.controller.signal);
    this.loops = new LoopResumer(saved?.loops ?? [], (loop) => this.store(loop.purpose), this.o.durability);
    const memory = this.o.components.memory ?? new MemoryManager(this.o.memory);
    this.thresholds = memoryThresholdsOf(memory);
    this.roles = new RoleWiring(this.o, {
      runId: init.runId,
      workspace: init.workspace,
      registry: init.registry,
      memory,
      emit: this.emit,
      now: init.now,
      signal: this.control.controller.signal,
      control: this.control,
      costSoFar: () => this.s.tally.cost?.total ?? 0,
      context: init.context,
      ...(init.checkpointer ? { wrapExecutor: (executor) => this.loops.wrap(executor) } : {}),
    });
    this.budget = new IterationBudget(this.o.limits.maxRunIterations);
    this.budget.spend(this.spent);
  }

  async execute(): Promise<RunResult> {
    const unwatch = this.control.watch(this.init.signal);
    let failure: StopRun | undefined;
    try {
      if (this.init.resume) await this.announceResume(this.init.resume);
      else await this.announceStart();
      await this.intake();
      await this.planStage();
      await executeStage(this);
      await this.synthesizeStage();
      if (this.o.verification) await verifyStage(this);
      this.typed = await outputStage(this, this.init.output);
    } catch (error) {
      failure = this.control.asStop(error, 'pipeline');
    } finally {
      unwatch();
    }
    return this.finish(failure);
  }

  // ---- start and resume ----

  /**
   * Stores the run's first snapshot (its input and options, nothing done yet), then emits `run-start`: in every
   * durability mode the save is awaited, so a run whose start was seen can be resumed, whenever it stops.
   */
  private async announceStart(): Promise<void> {
    const stored = await this.store('start').then(
      () => undefined,
      (error: unknown) => error,
    );
    this.emit({
      type: 'run-start',
      mode: 'pipeline',
      runId: this.init.runId,
      goal: this.init.task,
      workspace: this.init.workspace.root,
      decomposition: this.o.decomposition,
      verification: this.o.verification,
      warnings: [...(this.init.warnings ?? []), ...this.toolWarnings()],
      ...this.thresholds,
    });
    // A store that failed stops the run once its start is announced.
    if (stored) throw stored;
  }

  private async announceResume(snapshot: RunSnapshot): Promise<void> {
    const loops = snapshot.loops ?? [];
    this.emit({
      type: 'run-resume',
      runId: this.init.runId,
      mode: 'pipeline',
      stage: loops[0]?.purpose ?? stageOf(this.s),
      ...(loops.length ? { scopes: loops.map((loop) => loop.scope) } : {}),
      savedAt: snapshot.savedAt,
      redo: resumeRedo(loops),
    });
    // The resume is counted in the snapshot; the loops are still to be taken up, so they stay in it.
    await this.checkpoint('resume');
  }

  // ---- stages ----

  private async intake(): Promise<void> {
    if (this.s.attachments) return;
    this.s.attachments = await copyAttachments(this.init.workspace, this.init.attachments);
    await this.checkpoint('intake');
  }

  private async planStage(): Promise<void> {
    if (this.s.plan) return;
    this.control.check('plan');
    let plan: PlannedSubtask[];
    let fallback: 'single-subtask' | 'truncated' | 'decomposition-off' | undefined = 'decomposition-off';
    let reason: string | undefined;
    if (this.o.decomposition) {
      const outcome = await this.control.guard('plan', () =>
        this.roles.planner().plan({
          request: this.init.task,
          attachments: this.attachments,
          workspace: this.init.workspace,
          maxSubtasks: this.o.limits.maxSubtasks,
          signal: this.control.controller.signal,
          runId: this.init.runId,
          dataMark: this.mark,
        }),
      );
      const capped = capPlan(outcome.subtasks.length ? outcome.subtasks : [singleSubtask()], this.o.limits.maxSubtasks);
      fallback = !outcome.subtasks.length ? 'single-subtask' : capped.truncated ? 'truncated' : outcome.fallback;
      reason = !outcome.subtasks.length ? 'The planner returned no subtasks.' : (capped.reason ?? outcome.reason);
      plan = capped.subtasks;
    } else {
      plan = [singleSubtask()];
    }
    this.s.plan = plan;
    this.emit({
      type: 'plan-created',
      runId: this.init.runId,
      plan,
      ...(fallback ? { fallback } : {}),
      ...(reason ? { reason } : {}),
    });
    await this.checkpoint('plan');
  }

  private async synthesizeStage(): Promise<void> {
    if (this.s.synthesized) return;
    const records = this.s.records;
    const only = records[0];
    if (!this.o.decomposition) return this.deliverDirect(only);
    const interrupted = records.flatMap((record) => record.interruptedCalls ?? []);
    if (records.length === 1 && only?.status === 'completed') {
      // One completed subtask already is the deliverable; a synthesis loop would only copy it.
      this.s.deliverable = withInterruptedCalls({ answer: only.answer, files: [...only.files] }, interrupted);
      await this.endSynthesis('completed');
      return;
    }
    // The candidate until synthesis delivers: every completed answer and every file a subtask wrote.
    this.s.deliverable = partialDeliverable(records);
    const iterations = this.budget.allowance(this.o.limits.maxIterations);
    if (iterations < 1) this.control.stop('budget');
    this.control.check('synthesize');
    const outcome = await this.control.guard('synthesize', () =>
      this.roles.synthesizer().synthesize({
        runId: this.init.runId,
        request: this.init.task,
        subtasks: records,
        attachments: this.attachments,
        workspace: this.init.workspace,
        signal: this.control.controller.signal,
        maxIterations: iterations,
        timeoutMs: this.control.timeLeft(),
        dataMark: this.mark,
      }),
    );
    this.settle(outcome.executor, 'synthesize');
    const completed = outcome.status === 'completed';
    // A failed synthesis never replaces the candidate: its last words ("Let me draft…") are not a deliverable.
    const candidate =
      completed && (outcome.deliverable.answer.trim() || outcome.deliverable.files.length)
        ? outcome.deliverable
        : this.s.deliverable;
    this.s.deliverable = withInterruptedCalls(candidate, [
      ...interrupted,
      ...(outcome.executor.interruptedCalls ?? []),
    ]);
    await this.endSynthesis(completed ? 'completed' : 'failed');
    this.control.check('synthesize');
    if (!completed && !this.o.verification) {
      throw new StopRun(
        'error',
        outcome.executor.error ?? { code: 'internal', message: 'Synthesis failed.' },
        'synthesize',
      );
    }
  }

  /**
   * Without decomposition the run's one loop is the deliverable, whether it completed or not (the paper's DIRECT): no
   * synthesis. A failed loop is the run's failure unless verification is on to judge and repair what it left.
   */
  private async deliverDirect(loop: SubtaskRecord | undefined): Promise<void> {
    const completed = loop?.status === 'completed';
    const deliverable = { answer: loop?.answer ?? '', files: [...(loop?.files ?? [])] };
    this.s.deliverable = withInterruptedCalls(deliverable, loop?.interruptedCalls ?? []);
    await this.endSynthesis(completed ? 'completed' : 'failed');
    if (!completed && !this.o.verification) {
      const message = loop?.error ?? "The run's loop did not complete.";
      throw new StopRun('error', { code: loop?.errorCode ?? 'internal', message }, 'execute');
    }
  }

  private async endSynthesis(status: 'completed' | 'failed'): Promise<void> {
    this.s.synthesized = true;
    this.emit({ type: 'synthesis-finish', runId: this.init.runId, deliverable: this.s.deliverable, status });
    await this.checkpoint('synthesize');
  }

  // ---- loops, budget, snapshots and stopping ----

  /** Books a role's loop: its iterations, its abort or timeout, and a failure no retry can cure. */
  settle(result: ExecutorResult, stage: string): void {
    this.book(result, stage);
    this.control.failFast(result.error, stage);
  }

  /**
   * Books a loop's iterations; its abort or timeout is the run's (loops get the run's signal and time left), and so
   * is a store failure inside it: no later attempt may run unrecorded.
   */
  book(result: ExecutorResult, stage: string): void {
    this.spent += Math.max(0, result.iterations);
    this.budget.spend(result.iterations);
    if (this.storeFailure) throw new StopRun('error', errorOf(this.storeFailure), stage);
    if (result.status === 'aborted' || result.status === 'timeout') this.control.stop(result.status);
  }

  /**
   * Saves the run's state at a stage change: waits until it is stored with `durability: 'sync'`; with `'async'` the
   * save goes on behind the run, and a failed one stops the run at its next save or booking.
   */
  async checkpoint(stage: string): Promise<void> {
    const storing = this.store(stage);
    if (this.o.durability === 'sync') await storing;
    else storing.catch(() => undefined);
  }

  /**
   * Saves the run's state, with the latest state of every executor loop in progress, through the checkpointer;
   * resolves once it (or a newer state) is stored, rejects with a `StopRun` when the store failed. Nothing is saved
   * once the run has stopped: an aborted run stays resumable from where it was, not from its wind-down.
   */
  private async store(stage: string): Promise<void> {
    const checkpointer = this.init.checkpointer;
    if (this.storeFailure) throw new StopRun('error', errorOf(this.storeFailure), stage);
    if (!checkpointer || this.control.stopped) return;
    const loops = this.loops.inProgress();
    try {
      await checkpointer.save({
        state: this.s,
        used: { iterations: this.spent, elapsedMs: this.elapsedMs() },
        ...(loops.length ? { loops } : {}),
      });
    } catch (error) {
      // A save given up on because the run stopped: the stop (abort, time limit) is what ended the run.
      if (this.control.stopped) throw this.control.asStop(error, stage);
      this.storeFailure ??= toHarnessError(error);
      throw new StopRun('error', errorOf(this.storeFailure), stage);
    }
  }

  get attachments(): string[] {
    return this.s.attachments ?? [];
  }

  private elapsedMs(): number {
    return this.elapsedBefore + Math.max(0, this.init.now() - this.startedAt);
  }

  private toolWarnings(): string[] {
    return this.init.registry.list().flatMap((tool) => (tool.warnings ?? []).map((w) => `${tool.name}: ${w}`));
  }

  private async finish(failure: StopRun | undefined): Promise<RunResult> {
    if (failure && (failure.reason === 'error' || failure.reason === 'budget')) {
      this.emit({ type: 'run-error', runId: this.init.runId, error: failure.error, stage: failure.stage });
    }
    const assembled = assembleResult({
      runId: this.init.runId,
      failure,
      deliverable: this.s.deliverable,
      plan: this.s.plan ?? [],
      records: this.s.records,
      verdicts: this.s.verdicts,
      workspace: this.init.workspace.root,
      tally: this.s.tally,
      wallTimeMs: this.elapsedMs(),
    });
    const result = this.init.output
      ? { ...assembled, ...(this.typed ?? typedResultSkipped(assembled.status)) }
      : assembled;
    // An aborted run, or one ended by its store's failure, keeps its last good snapshot: resume() goes on from there.
    // A store that failed behind the run after its last step refuses the finished snapshot, which warns about it.
    if (result.status !== 'aborted' && result.error?.code !== 'store-failed')
      await this.init.checkpointer?.finish(result);
    else await this.init.checkpointer?.idle();
    await this.init.endWorkspace?.(result.status);
    this.emit({ type: 'run-finish', runId: this.init.runId, result });
    return result;
  }
}

function freshState(): PipelineState {
  return {
    kind: 'pipeline',
    attachments: null,
    plan: null,
    records: [],
    current: [],
    writes: {},
    synthesized: false,
    deliverable: { answer: '', files: [] },
    verdicts: [],
    repairs: 0,
    repairing: null,
    tally: newReportTally(),
  };
}

function errorOf(error: HarnessError): { code: string; message: string } {
  return { code: error.code, message: error.message };
}
