/**
 * One run of the OneDayAgent pipeline: intake → plan → execute → synthesize → verify → repair. All per-run state
 * lives here; stopping is {@link RunControl}'s job, the iteration shares {@link IterationBudget}'s, the roles
 * {@link RoleWiring}'s and the result {@link assembleResult}'s.
 * @module
 */
import { runEventSender, type EmitEvent, type HarnessEvents } from '../events.js';
import type { RunCheckpointer, RunSnapshot } from '../durability/types.js';
import type { ExecutorResult } from '../executor/types.js';
import { MemoryManager } from '../memory/memory-manager.js';
import { saveLongAnswer } from '../pipeline/answers.js';
import { partialDeliverable, renderCheckpoints, toCheckpoint } from '../pipeline/checkpoints.js';
import type { VerifierLike } from '../pipeline/components.js';
import { capPlan, singleSubtask } from '../pipeline/plan.js';
import type { Deliverable, PlannedSubtask, RunResult, SubtaskRecord, Verdict } from '../pipeline/types.js';
import { DataMark } from '../prompts/datamark.js';
import { renderSubtaskObjective } from '../prompts/subtask.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { Workspace } from '../workspace/types.js';
import { copyAttachments } from './intake.js';
import { IterationBudget } from './iteration-budget.js';
import type { ResolvedHarnessOptions } from './options.js';
import { newReportTally, tallyEvent } from './report.js';
import { RoleWiring } from './role-wiring.js';
import { FATAL_ERROR_CODES, RunControl, StopRun } from './run-control.js';
import { assembleResult } from './run-result.js';

/** Everything one run starts from. @internal */
export interface PipelineRunInit {
  options: ResolvedHarnessOptions;
  registry: ToolRegistry;
  bus: HarnessEvents;
  now: () => number;
  runId: string;
  task: string;
  attachments: string[];
  signal: AbortSignal | undefined;
  workspace: Workspace;
  /**
   * Seals and unlocks the run's workspace once its status is known. Called before `run-finish`, so that a listener
   * of that event can start the next run on the same directory. Never throws.
   */
  endWorkspace?: ((status: RunResult['status']) => Promise<void>) | undefined;
  /** Where the run's snapshots go; absent when the run keeps none (`store: false`). */
  checkpointer?: RunCheckpointer | undefined;
  /** The snapshot to go on from (`harness.resume()`), already checked to belong to this run, mode and options. */
  resume?: RunSnapshot | undefined;
}

/** One run of the pipeline. @internal */
export class PipelineRun {
  private readonly o: ResolvedHarnessOptions;
  /** The report's counters, folded from the run's events as they happen. */
  private readonly tally = newReportTally();
  private readonly emit: EmitEvent;
  private readonly control: RunControl;
  private readonly roles: RoleWiring;
  private readonly startedAt: number;
  private budget: IterationBudget;
  private attachmentPaths: string[] = [];
  private plan: PlannedSubtask[] = [];
  private readonly records: SubtaskRecord[] = [];
  private readonly verdicts: Verdict[] = [];
  private deliverable: Deliverable = { answer: '', files: [] };
  /** This run's boundary of untrusted text in every prompt. */
  private readonly mark = DataMark.random();

  constructor(private readonly init: PipelineRunInit) {
    this.o = init.options;
    this.startedAt = init.now();
    this.emit = runEventSender(init.bus, init.now, (event) => tallyEvent(this.tally, event));
    this.control = new RunControl(this.o.limits);
    this.roles = new RoleWiring(this.o, {
      runId: init.runId,
      workspace: init.workspace,
      registry: init.registry,
      memory: this.o.components.memory ?? new MemoryManager(this.o.memory),
      emit: this.emit,
      now: init.now,
      signal: this.control.controller.signal,
    });
    this.budget = this.sizeBudget(1);
  }

  async execute(): Promise<RunResult> {
    const unwatch = this.control.watch(this.init.signal);
    let failure: StopRun | undefined;
    try {
      this.emit({
        type: 'run-start',
        mode: 'pipeline',
        runId: this.init.runId,
        goal: this.init.task,
        workspace: this.init.workspace.root,
        decomposition: this.o.decomposition,
        verification: this.o.verification,
        warnings: this.toolWarnings(),
      });
      await this.intake();
      await this.planStage();
      await this.executeStage();
      await this.synthesizeStage();
      if (this.o.verification) await this.verifyStage();
    } catch (error) {
      failure = this.control.asStop(error, 'pipeline');
    } finally {
      unwatch();
    }
    return this.finish(failure);
  }

  // ---- stages ----

  private async intake(): Promise<void> {
    this.attachmentPaths = await copyAttachments(this.init.workspace, this.init.attachments);
  }

  private async planStage(): Promise<void> {
    this.control.check('plan');
    if (!this.o.decomposition) {
      this.plan = [singleSubtask()];
      this.emit({ type: 'plan-created', runId: this.init.runId, plan: this.plan, fallback: 'decomposition-off' });
      return;
    }
    const outcome = await this.control.guard('plan', () =>
      this.roles.planner().plan({
        request: this.init.task,
        attachments: this.attachmentPaths,
        workspace: this.init.workspace,
        maxSubtasks: this.o.limits.maxSubtasks,
        signal: this.control.controller.signal,
        runId: this.init.runId,
        dataMark: this.mark,
      }),
    );
    const capped = capPlan(outcome.subtasks.length ? outcome.subtasks : [singleSubtask()], this.o.limits.maxSubtasks);
    const fallback = !outcome.subtasks.length ? 'single-subtask' : capped.reason ? 'truncated' : outcome.fallback;
    const reason = !outcome.subtasks.length ? 'The planner returned no subtasks.' : (capped.reason ?? outcome.reason);
    this.plan = capped.subtasks;
    this.budget = this.sizeBudget(this.plan.length);
    this.emit({
      type: 'plan-created',
      runId: this.init.runId,
      plan: this.plan,
      ...(fallback ? { fallback } : {}),
      ...(reason ? { reason } : {}),
    });
  }

  private async executeStage(): Promise<void> {
    for (const [index, subtask] of this.plan.entries()) {
      if (this.control.stopped) {
        this.records.push({ ...subtask, status: 'skipped', attempts: 0, answer: '', files: [] });
        continue;
      }
      this.emit({ type: 'subtask-start', runId: this.init.runId, subtask, index });
      const { record, lastError } = await this.runSubtask(subtask, index);
      this.records.push(record);
      this.emit({ type: 'subtask-finish', runId: this.init.runId, record });
      if (record.status === 'failed') this.control.failFast(lastError, 'execute');
    }
    this.control.check('execute');
  }

  /** Runs a subtask's attempts, each in a fresh scope (and so a fresh file-preview budget). */
  private async runSubtask(
    subtask: PlannedSubtask,
    index: number,
  ): Promise<{ record: SubtaskRecord; lastError: ExecutorResult['error'] }> {
    const priorState = renderCheckpoints(
      this.records.map((r) => toCheckpoint(r)),
      this.mark,
      errorsOf(this.records),
    );
    let attempts = 0;
    let result: ExecutorResult | undefined;
    let previousError: string | undefined;
    const triedFiles: string[] = [];
    let lastAnswer = '';
    while (attempts < this.o.limits.subtaskAttempts && !this.control.stopped) {
      const iterations = this.budget.forSubtask(index);
      if (iterations < 1) {
        previousError ??=
          'No iterations were left for this subtask: the rest of limits.maxIterations is reserved for later stages.';
        break;
      }
      attempts += 1;
      this.emit({
        type: 'subtask-attempt',
        runId: this.init.runId,
        subtaskId: subtask.id,
        attempt: attempts,
        ...(previousError ? { previousError } : {}),
      });
      result = await this.runLoop('execute', {
        scope: attempts === 1 ? subtask.id : `${subtask.id}-attempt-${attempts}`,
        objective: renderSubtaskObjective({
          plan: this.plan,
          index,
          attachments: this.attachmentPaths,
          previousError,
          mark: this.mark,
        }),
        priorState,
        maxIterations: iterations,
      });
      triedFiles.push(...result.files);
      if (result.answer.trim()) lastAnswer = result.answer;
      if (result.status === 'completed') break;
      previousError = result.error?.message ?? `the attempt ended with status ${result.status}`;
      // Another attempt cannot cure wrong credentials or an unknown model: the stage ends the run instead.
      if (result.error && FATAL_ERROR_CODES.has(result.error.code)) break;
    }
    const completed = result?.status === 'completed';
    const answer = completed ? (result?.answer ?? '') : lastAnswer;
    // A failed subtask keeps every file its attempts wrote: they are the material synthesis can still use.
    const files = completed ? [...(result?.files ?? [])] : [...new Set(triedFiles)];
    const error = completed ? undefined : (previousError ?? this.control.message());
    const answerFile = await saveLongAnswer(this.init.workspace, subtask.id, answer, {
      runId: this.init.runId,
      emit: this.emit,
      scope: subtask.id,
    });
    const record: SubtaskRecord = {
      ...subtask,
      status: completed ? 'completed' : 'failed',
      attempts,
      answer,
      files,
      ...(answerFile ? { answerFile } : {}),
      ...(error ? { error } : {}),
    };
    return { record, lastError: result?.error };
  }

  private async synthesizeStage(): Promise<void> {
    const only = this.records[0];
    if (this.records.length === 1 && only?.status === 'completed') {
      // One completed subtask already is the deliverable; a synthesis loop would only copy it.
      this.deliverable = { answer: only.answer, files: [...only.files] };
      this.emit({
        type: 'synthesis-finish',
        runId: this.init.runId,
        deliverable: this.deliverable,
        status: 'completed',
      });
      return;
    }
    // The candidate until synthesis delivers: every completed answer and every file a subtask wrote.
    this.deliverable = partialDeliverable(this.records);
    const iterations = this.budget.forSynthesis();
    if (iterations < 1) this.control.stop('budget');
    this.control.check('synthesize');
    const outcome = await this.control.guard('synthesize', () =>
      this.roles.synthesizer().synthesize({
        runId: this.init.runId,
        request: this.init.task,
        subtasks: this.records,
        attachments: this.attachmentPaths,
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
    if (completed && (outcome.deliverable.answer.trim() || outcome.deliverable.files.length)) {
      this.deliverable = outcome.deliverable;
    }
    this.emit({
      type: 'synthesis-finish',
      runId: this.init.runId,
      deliverable: this.deliverable,
      status: completed ? 'completed' : 'failed',
    });
    this.control.check('synthesize');
    if (!completed && !this.o.verification) {
      throw new StopRun(
        'error',
        outcome.executor.error ?? { code: 'internal', message: 'Synthesis failed.' },
        'synthesize',
      );
    }
  }

  private async verifyStage(): Promise<void> {
    const verifier = this.roles.verifier();
    const repairer = this.roles.repairer();
    let verdict = await this.verifyOnce(verifier, 1);
    for (let attempt = 1; verdict.status === 'failed' && attempt <= this.o.limits.repairAttempts; attempt++) {
      const iterations = this.budget.forRepair(this.o.limits.repairIterations);
      if (iterations < 1) this.control.stop('budget');
      this.control.check('repair');
      this.emit({ type: 'repair-start', runId: this.init.runId, attempt, defects: verdict.defects });
      const outcome = await this.control.guard('repair', () =>
        repairer.repair({
          runId: this.init.runId,
          request: this.init.task,
          deliverable: this.deliverable,
          defects: verdict.defects,
          attempt,
          workspace: this.init.workspace,
          signal: this.control.controller.signal,
          maxIterations: iterations,
          timeoutMs: this.control.timeLeft(),
          dataMark: this.mark,
        }),
      );
      this.settle(outcome.executor, 'repair');
      // A failed repair leaves the deliverable as it was; its defects stay open for the next verification.
      if (outcome.status === 'completed') this.deliverable = outcome.deliverable;
      this.emit({
        type: 'repair-finish',
        runId: this.init.runId,
        attempt,
        status: outcome.status,
        deliverable: this.deliverable,
      });
      this.control.check('repair');
      verdict = await this.verifyOnce(verifier, attempt + 1);
    }
  }

  private async verifyOnce(verifier: VerifierLike, attempt: number): Promise<Verdict> {
    this.control.check('verify');
    const verdict = await this.control.guard('verify', () =>
      verifier.verify({
        request: this.init.task,
        deliverable: this.deliverable,
        subtaskAnswers: this.records,
        attachments: this.attachmentPaths,
        workspace: this.init.workspace,
        attempt,
        signal: this.control.controller.signal,
        runId: this.init.runId,
        dataMark: this.mark,
      }),
    );
    this.verdicts.push(verdict);
    this.emit({
      type: 'verify-finish',
      runId: this.init.runId,
      attempt,
      passed: verdict.passed,
      verdict,
      defects: verdict.defects,
    });
    return verdict;
  }

  // ---- loops, budget and stopping ----

  private async runLoop(
    purpose: 'execute',
    input: { scope: string; objective: string; priorState: string; maxIterations: number },
  ): Promise<ExecutorResult> {
    const executor = this.roles.executorFor(purpose);
    const result = await this.control.guard(purpose, () =>
      executor.run({
        runId: this.init.runId,
        purpose,
        scope: input.scope,
        request: this.init.task,
        objective: input.objective,
        ...(input.priorState ? { priorState: input.priorState } : {}),
        workspace: this.init.workspace,
        signal: this.control.controller.signal,
        maxIterations: input.maxIterations,
        timeoutMs: this.control.timeLeft(),
        dataMark: this.mark,
      }),
    );
    this.budget.spend(result.iterations);
    this.stopWithLoop(result);
    return result;
  }

  /** Books a role's loop: its iterations, its abort or timeout, and a failure no retry can cure. */
  private settle(result: ExecutorResult, stage: string): void {
    this.budget.spend(result.iterations);
    this.stopWithLoop(result);
    this.control.failFast(result.error, stage);
  }

  /** Loops get the run's signal and its time left, so their abort or timeout is the run's. */
  private stopWithLoop(result: ExecutorResult): void {
    if (result.status === 'aborted' || result.status === 'timeout') this.control.stop(result.status);
  }

  private sizeBudget(subtasks: number): IterationBudget {
    return new IterationBudget({
      total: this.o.limits.maxIterations,
      subtasks,
      repairs: this.o.verification && this.o.limits.repairAttempts > 0,
    });
  }

  private toolWarnings(): string[] {
    return this.init.registry.list().flatMap((tool) => (tool.warnings ?? []).map((w) => `${tool.name}: ${w}`));
  }

  private async finish(failure: StopRun | undefined): Promise<RunResult> {
    if (failure && (failure.reason === 'error' || failure.reason === 'budget')) {
      this.emit({ type: 'run-error', runId: this.init.runId, error: failure.error, stage: failure.stage });
    }
    const result = assembleResult({
      runId: this.init.runId,
      failure,
      deliverable: this.deliverable,
      plan: this.plan,
      records: this.records,
      verdicts: this.verdicts,
      workspace: this.init.workspace.root,
      tally: this.tally,
      wallTimeMs: Math.max(0, this.init.now() - this.startedAt),
    });
    await this.init.endWorkspace?.(result.status);
    this.emit({ type: 'run-finish', runId: this.init.runId, result });
    return result;
  }
}

function errorsOf(records: readonly SubtaskRecord[]): Map<string, string> {
  return new Map(records.flatMap((r) => (r.error ? [[r.id, r.error] as const] : [])));
}
