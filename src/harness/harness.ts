/**
 * `createHarness` and the OneDayAgent pipeline: intake → plan → execute → synthesize → verify → repair.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { LlmBackend, Purpose } from '../backend/types.js';
import { DEFAULTS } from '../defaults.js';
import { HarnessError, toHarnessError, type HarnessErrorCode } from '../errors.js';
import {
  HarnessEvents,
  type EmitEvent,
  type HarnessEvent,
  type HarnessEventType,
  type HarnessListener,
} from '../events.js';
import { Executor } from '../executor/executor.js';
import type { ExecutorLike, ExecutorResult } from '../executor/types.js';
import type { RequestFitter } from '../llm/call-model.js';
import { MemoryManager } from '../memory/memory-manager.js';
import { parseMemoryOptions } from '../memory/options.js';
import type { ExecutionMemory } from '../memory/types.js';
import { Planner, singleSubtask } from '../planner/planner.js';
import type { PlannerLike, VerifierLike } from '../pipeline/components.js';
import { Repairer } from '../repairer/repairer.js';
import { Synthesizer } from '../synthesizer/synthesizer.js';
import { ToolRegistry } from '../tools/registry.js';
import { Verifier } from '../verifier/verifier.js';
import { LocalWorkspace } from '../workspace/local-workspace.js';
import type { Workspace } from '../workspace/types.js';
import { CHECKPOINT_ANSWER_CHARS, partialDeliverable, renderCheckpoints, toCheckpoint } from '../pipeline/checkpoints.js';
import { parseHarnessOptions, type HarnessOptions, type ResolvedHarnessOptions, type RoleName } from './options.js';
import { buildReport } from './report.js';
import type { Deliverable, PlannedSubtask, RunResult, SubtaskRecord, Verdict } from '../pipeline/types.js';

/** What `harness.run()` accepts: the task text, or the task with attachments, a signal and a run id. */
export type RunInput =
  | string
  | {
      task: string;
      /** Paths of local files (absolute or relative to the working directory), copied into `attachments/`. */
      attachments?: readonly string[];
      signal?: AbortSignal;
      runId?: string;
    };

type StopReason = 'aborted' | 'timeout' | 'budget';

/**
 * A configured pipeline. Each `run` gets its own workspace, memory, executors and event log; the harness keeps
 * only its options and its listeners, so two harnesses never share anything.
 */
export class Harness {
  private readonly options: ResolvedHarnessOptions;
  private readonly registry: ToolRegistry;
  private readonly events = new HarnessEvents();
  private readonly now: () => number;
  private readonly generateId: () => string;

  constructor(options: HarnessOptions) {
    this.options = parseHarnessOptions(options);
    // Each run builds its own MemoryManager from these; checking them here makes a bad value fail at createHarness, not at run().
    if (this.options.memory !== undefined) parseMemoryOptions(this.options.memory);
    const tools = this.options.tools;
    this.registry =
      tools instanceof ToolRegistry ? tools : new ToolRegistry(tools, { toolTimeoutMs: this.options.limits.toolTimeoutMs });
    this.now = this.options.now ?? Date.now;
    this.generateId = this.options.generateId ?? (() => `run-${randomUUID()}`);
  }

  /** Calls `listener` for every event of `type` from every run of this harness. Returns a function that removes it. */
  on<T extends HarnessEventType>(type: T, listener: HarnessListener<T>): () => void {
    return this.events.on(type, listener);
  }

  /** Calls `listener` for every event of every type. Returns a function that removes it. */
  onAny(listener: (event: HarnessEvent) => void): () => void {
    return this.events.onAny(listener);
  }

  /**
   * Runs the pipeline on one request. Resolves with the result also when the run is aborted, times out, exhausts
   * its iteration budget or a stage fails; rejects only on invalid input or when the workspace cannot be created.
   */
  async run(input: RunInput): Promise<RunResult> {
    const normalized = normalizeInput(input);
    const workspace = await this.openWorkspace();
    const run = new PipelineRun({
      options: this.options,
      registry: this.registry,
      bus: this.events,
      now: this.now,
      runId: normalized.runId ?? this.generateId(),
      task: normalized.task,
      attachments: normalized.attachments,
      signal: normalized.signal,
      workspace,
    });
    return run.execute();
  }

  private async openWorkspace(): Promise<Workspace> {
    const option = this.options.workspace;
    if (option !== undefined && typeof option !== 'string') return option;
    try {
      return await LocalWorkspace.create(option === undefined ? {} : { dir: option });
    } catch (error) {
      throw new HarnessError(
        'invalid-options',
        `Could not create the workspace${option ? ` at "${option}"` : ''}: ${toHarnessError(error).message}`,
        { cause: error },
      );
    }
  }
}

/**
 * Creates a harness: the OneDayAgent pipeline wired with default components, any of which can be replaced.
 *
 * @example
 * ```ts
 * const harness = createHarness({ backend, tools: builtinTools() });
 * harness.on('subtask-finish', (e) => console.log(e.record.title, e.record.status));
 * const result = await harness.run('Compare three note-taking apps and write compare.md');
 * console.log(result.status, result.deliverable.files, result.report);
 * ```
 */
export function createHarness(options: HarnessOptions): Harness {
  return new Harness(options);
}

function normalizeInput(input: RunInput): {
  task: string;
  attachments: string[];
  signal: AbortSignal | undefined;
  runId: string | undefined;
} {
  const object = typeof input === 'string' ? { task: input } : input;
  if (typeof object !== 'object' || object === null || typeof object.task !== 'string' || !object.task.trim()) {
    throw new HarnessError('invalid-input', 'harness.run() needs a non-empty task: a string or { task, attachments?, signal?, runId? }.');
  }
  const given: unknown = 'attachments' in object ? object.attachments : undefined;
  if (given !== undefined && (!Array.isArray(given) || given.some((a) => typeof a !== 'string' || !a))) {
    throw new HarnessError('invalid-input', 'attachments must be an array of non-empty file paths, e.g. ["./brief.pdf"].');
  }
  const attachments = given === undefined ? [] : [...(given as string[])];
  const signal: unknown = 'signal' in object ? object.signal : undefined;
  if (signal !== undefined && !isAbortSignal(signal)) {
    throw new HarnessError('invalid-input', 'signal must be an AbortSignal (e.g. from new AbortController().signal).');
  }
  const runId = 'runId' in object ? object.runId : undefined;
  if (runId !== undefined && (typeof runId !== 'string' || !runId)) {
    throw new HarnessError('invalid-input', 'runId must be a non-empty string.');
  }
  return { task: object.task, attachments, signal, runId };
}

/** Duck-typed, so signals of another realm (a test DOM, a polyfill) are accepted too. */
function isAbortSignal(value: unknown): value is AbortSignal {
  const candidate = value as Partial<AbortSignal> | null;
  return typeof candidate === 'object' && candidate !== null && typeof candidate.aborted === 'boolean' &&
    typeof candidate.addEventListener === 'function' && typeof candidate.removeEventListener === 'function';
}

interface PipelineRunInit {
  options: ResolvedHarnessOptions;
  registry: ToolRegistry;
  bus: HarnessEvents;
  now: () => number;
  runId: string;
  task: string;
  attachments: string[];
  signal: AbortSignal | undefined;
  workspace: Workspace;
}

/** Raised inside a run to end it early; caught by the run itself. */
class StopRun extends Error {
  constructor(readonly reason: StopReason | 'error', readonly error: { code: string; message: string }, readonly stage: string) {
    super(error.message);
  }
}

/** One run of the pipeline: all per-run state lives here. */
class PipelineRun {
  private readonly o: ResolvedHarnessOptions;
  private readonly log: HarnessEvent[] = [];
  private readonly emit: EmitEvent;
  private readonly controller = new AbortController();
  private stopReason: StopReason | undefined;
  private iterationsLeft: number;
  private readonly startedAt: number;
  private readonly startedMono = performance.now();
  private readonly memory: ExecutionMemory;
  private readonly executors = new Map<Purpose, ExecutorLike>();
  private attachmentPaths: string[] = [];
  private plan: PlannedSubtask[] = [];
  private readonly records: SubtaskRecord[] = [];
  private readonly verdicts: Verdict[] = [];
  private deliverable: Deliverable = { answer: '', files: [] };

  constructor(private readonly init: PipelineRunInit) {
    this.o = init.options;
    this.startedAt = init.now();
    this.iterationsLeft = this.o.limits.maxIterations;
    this.emit = (event) => {
      const stamped = { ...event, timestamp: init.now() } as HarnessEvent;
      this.log.push(stamped);
      init.bus.send(stamped);
    };
    this.memory = this.o.components.memory ?? new MemoryManager(this.o.memory);
  }

  async execute(): Promise<RunResult> {
    const { signal } = this.init;
    const onAbort = () => this.stop('aborted');
    if (signal?.aborted) this.stop('aborted');
    signal?.addEventListener('abort', onAbort, { once: true });
    // setTimeout fires at once for delays beyond 2^31-1 ms, so longer limits are clamped (about 24 days).
    const timer = setTimeout(() => this.stop('timeout'), Math.min(this.o.limits.timeoutMs, 2 ** 31 - 1));
    let failure: StopRun | undefined;
    try {
      this.emit({
        type: 'run-start',
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
      failure = error instanceof StopRun ? error : this.asStop(error, 'pipeline');
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    return this.finish(failure);
  }

  // ---- stages ----

  private async intake(): Promise<void> {
    const used = new Set<string>();
    for (const source of this.init.attachments) {
      const absolute = path.resolve(source);
      const dest = uniqueName(`attachments/${path.basename(absolute)}`, used);
      try {
        const copyIn = (this.init.workspace as Partial<LocalWorkspace>).copyIn;
        if (typeof copyIn === 'function') await copyIn.call(this.init.workspace, absolute, dest);
        else await this.init.workspace.writeFile(dest, await readFile(absolute), { tool: 'intake' });
      } catch (error) {
        throw new StopRun(
          'error',
          { code: 'invalid-input', message: `Attachment "${source}" could not be copied into the workspace: ${toHarnessError(error).message}` },
          'intake',
        );
      }
      this.attachmentPaths.push(dest);
    }
  }

  private async planStage(): Promise<void> {
    this.checkStop('plan');
    if (!this.o.decomposition) {
      this.plan = [singleSubtask()];
      this.emit({ type: 'plan-created', runId: this.init.runId, plan: this.plan, fallback: 'decomposition-off' });
      return;
    }
    const planner = this.o.components.planner ?? this.defaultPlanner();
    const outcome = await this.guard('plan', () =>
      planner.plan({
        request: this.init.task,
        attachments: this.attachmentPaths,
        maxSubtasks: this.o.limits.maxSubtasks,
        signal: this.controller.signal,
        runId: this.init.runId,
      }),
    );
    let subtasks = outcome.subtasks.length ? outcome.subtasks : [singleSubtask()];
    let fallback = outcome.subtasks.length ? outcome.fallback : 'single-subtask';
    let reason = outcome.subtasks.length ? outcome.reason : 'The planner returned no subtasks.';
    if (subtasks.length > this.o.limits.maxSubtasks) {
      subtasks = subtasks.slice(0, this.o.limits.maxSubtasks);
      fallback = 'truncated';
      reason = `Kept the first ${this.o.limits.maxSubtasks} subtasks (limits.maxSubtasks).`;
    }
    this.plan = subtasks.map((s, i) => ({ ...s, id: `subtask-${i + 1}` }));
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
      if (this.stopReason) {
        this.records.push({ ...subtask, status: 'skipped', attempts: 0, answer: '', files: [] });
        continue;
      }
      this.emit({ type: 'subtask-start', runId: this.init.runId, subtask, index });
      const priorState = renderCheckpoints(
        this.records.map(toCheckpoint),
        new Map(this.records.flatMap((r) => (r.error ? [[r.id, r.error] as const] : []))),
      );
      let attempts = 0;
      let result: ExecutorResult | undefined;
      let previousError: string | undefined;
      while (attempts < this.o.limits.subtaskAttempts && !this.stopReason) {
        if (this.iterationsLeft <= 0) {
          this.stopReason = 'budget';
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
        result = await this.runExecutor('execute', {
          scope: subtask.id,
          objective: subtaskObjective(subtask, index, this.plan.length, this.attachmentPaths, previousError),
          priorState,
        });
        if (result.status === 'completed') break;
        previousError = result.error?.message ?? `the attempt ended with status ${result.status}`;
      }
      const completed = result?.status === 'completed';
      const error = completed ? undefined : (previousError ?? this.stopMessage());
      const answer = result?.answer ?? '';
      const answerFile = await this.saveLongAnswer(subtask.id, answer);
      const record: SubtaskRecord = {
        ...subtask,
        status: completed ? 'completed' : 'failed',
        attempts,
        answer,
        files: [...(result?.files ?? [])],
        ...(answerFile ? { answerFile } : {}),
        ...(error ? { error } : {}),
      };
      this.records.push(record);
      this.emit({ type: 'subtask-finish', runId: this.init.runId, record });
    }
    this.checkStop('execute');
  }

  /** Saves an answer too long for a checkpoint under `.harness/answers/`, so later loops can read all of it. */
  private async saveLongAnswer(subtaskId: string, answer: string): Promise<string | undefined> {
    if (answer.length <= CHECKPOINT_ANSWER_CHARS) return undefined;
    const relative = `.harness/answers/${subtaskId}.md`;
    try {
      const absolute = path.join(this.init.workspace.root, relative);
      await mkdir(path.dirname(absolute), { recursive: true });
      await writeFile(absolute, answer, 'utf8');
      return relative;
    } catch {
      return undefined;
    }
  }

  private async synthesizeStage(): Promise<void> {
    const only = this.records[0];
    if (this.records.length === 1 && only?.status === 'completed') {
      // One completed subtask already is the deliverable; a synthesis loop would only copy it.
      this.deliverable = { answer: only.answer, files: [...only.files] };
      this.emit({ type: 'synthesis-finish', runId: this.init.runId, deliverable: this.deliverable, status: 'completed' });
      return;
    }
    this.deliverable = partialDeliverable(this.records);
    this.checkBudget('synthesize');
    const synthesizer = this.o.components.synthesizer ?? new Synthesizer({ executor: this.executorFor('synthesize'), ...optional('prompt', this.o.prompts.synthesize) });
    const outcome = await this.guard('synthesize', () =>
      synthesizer.synthesize({
        runId: this.init.runId,
        request: this.init.task,
        subtasks: this.records,
        attachments: this.attachmentPaths,
        workspace: this.init.workspace,
        signal: this.controller.signal,
        maxIterations: this.iterationsLeft,
        timeoutMs: this.timeLeft(),
      }),
    );
    this.settle(outcome.executor);
    const status = outcome.status === 'completed' ? 'completed' : 'failed';
    if (outcome.deliverable.answer.trim() || outcome.deliverable.files.length) this.deliverable = outcome.deliverable;
    this.emit({ type: 'synthesis-finish', runId: this.init.runId, deliverable: this.deliverable, status });
    this.checkStop('synthesize');
    if (status === 'failed' && !this.o.verification) {
      throw new StopRun('error', outcome.executor.error ?? { code: 'internal', message: 'Synthesis failed.' }, 'synthesize');
    }
  }

  private async verifyStage(): Promise<void> {
    const verifier = this.o.components.verifier ?? this.defaultVerifier();
    const repairer = this.o.components.repairer ?? new Repairer({ executor: this.executorFor('repair'), ...optional('prompt', this.o.prompts.repair) });
    let verdict = await this.verifyOnce(verifier, 1);
    for (let attempt = 1; verdict.status === 'failed' && attempt <= this.o.limits.repairAttempts; attempt++) {
      this.checkBudget('repair');
      this.emit({ type: 'repair-start', runId: this.init.runId, attempt, defects: verdict.defects });
      const outcome = await this.guard('repair', () =>
        repairer.repair({
          runId: this.init.runId,
          request: this.init.task,
          deliverable: this.deliverable,
          defects: verdict.defects,
          attempt,
          workspace: this.init.workspace,
          signal: this.controller.signal,
          maxIterations: Math.min(this.o.limits.repairIterations, this.iterationsLeft),
          timeoutMs: this.timeLeft(),
        }),
      );
      this.settle(outcome.executor);
      this.deliverable = outcome.deliverable;
      this.emit({ type: 'repair-finish', runId: this.init.runId, attempt, status: outcome.status, deliverable: this.deliverable });
      this.checkStop('repair');
      verdict = await this.verifyOnce(verifier, attempt + 1);
    }
  }

  private async verifyOnce(verifier: VerifierLike, attempt: number): Promise<Verdict> {
    this.checkStop('verify');
    const verdict = await this.guard('verify', () =>
      verifier.verify({
        request: this.init.task,
        deliverable: this.deliverable,
        subtaskAnswers: this.records,
        attachments: this.attachmentPaths,
        workspace: this.init.workspace,
        attempt,
        signal: this.controller.signal,
        runId: this.init.runId,
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

  // ---- wiring ----

  private backendFor = (role: RoleName | Purpose): LlmBackend =>
    (this.o.roles as Partial<Record<string, LlmBackend>>)[role] ?? this.o.backend;

  private countTokens = (...args: Parameters<ExecutionMemory['countRequest']>): number => this.memory.countRequest(...args);

  /** Plan and verify requests go through the memory too: whole requests are protected, so they fit or fail clearly. */
  private fit: RequestFitter = (messages, call) =>
    this.memory.fitRequest(
      { messages, tools: [], protectedCount: messages.length },
      {
        runId: this.init.runId,
        purpose: call.purpose,
        scope: call.scope,
        backend: this.backendFor(call.purpose),
        summarizer: this.backendFor('summarize'),
        workspace: this.init.workspace,
        signal: call.signal ?? this.controller.signal,
        emit: this.emit,
      },
    );

  private defaultPlanner(): PlannerLike {
    return new Planner({
      backend: this.backendFor('plan'),
      emit: this.emit,
      countTokens: this.countTokens,
      fit: this.fit,
      now: this.init.now,
      ...optional('prompt', this.o.prompts.plan),
    });
  }

  private defaultVerifier(): VerifierLike {
    const backend = this.backendFor('verify');
    return new Verifier({
      backend,
      emit: this.emit,
      countTokens: this.countTokens,
      fit: this.fit,
      previewBudgetChars: previewBudgetFor(backend.contextWindow),
      now: this.init.now,
      ...optional('prompt', this.o.prompts.verify),
    });
  }

  private executorFor(purpose: 'execute' | 'synthesize' | 'repair'): ExecutorLike {
    const custom = this.o.components.executor;
    if (custom) return custom;
    let executor = this.executors.get(purpose);
    if (!executor) {
      executor = new Executor({
        backend: this.backendFor(purpose),
        tools: this.init.registry,
        memory: this.memory,
        emit: this.emit,
        backendFor: (role) => this.backendFor(role),
        limits: {
          maxIterations: this.o.limits.maxIterations,
          timeoutMs: this.o.limits.timeoutMs,
          toolTimeoutMs: this.o.limits.toolTimeoutMs,
        },
        now: this.init.now,
        ...optional('systemPrompt', this.o.prompts.execute),
      });
      this.executors.set(purpose, executor);
    }
    return executor;
  }

  private async runExecutor(
    purpose: 'execute',
    input: { scope: string; objective: string; priorState: string },
  ): Promise<ExecutorResult> {
    const executor = this.executorFor(purpose);
    const result = await this.guard(purpose, () =>
      executor.run({
        runId: this.init.runId,
        purpose,
        scope: input.scope,
        request: this.init.task,
        objective: input.objective,
        ...(input.priorState ? { priorState: input.priorState } : {}),
        workspace: this.init.workspace,
        signal: this.controller.signal,
        maxIterations: this.iterationsLeft,
        timeoutMs: this.timeLeft(),
      }),
    );
    this.settle(result);
    return result;
  }

  // ---- limits and stopping ----

  private stop(reason: StopReason): void {
    if (this.stopReason) return;
    this.stopReason = reason;
    this.controller.abort(new HarnessError(reason === 'timeout' ? 'timeout' : 'aborted', this.stopMessage()));
  }

  /** Books a finished executor loop: its iterations, and a loop that hit the run's abort or time limit. */
  private settle(result: ExecutorResult): void {
    this.iterationsLeft = Math.max(0, this.iterationsLeft - result.iterations);
    // Loops get the run's signal and its time left, so their abort or timeout is the run's.
    if (result.status === 'aborted' || result.status === 'timeout') this.stop(result.status);
  }

  private timeLeft(): number {
    return Math.max(1, Math.floor(this.o.limits.timeoutMs - (performance.now() - this.startedMono)));
  }

  private checkBudget(stage: string): void {
    if (this.iterationsLeft <= 0 && !this.stopReason) this.stopReason = 'budget';
    this.checkStop(stage);
  }

  private checkStop(stage: string): void {
    const reason = this.stopReason;
    if (!reason) return;
    const code: HarnessErrorCode = reason === 'budget' ? 'budget-exhausted' : reason;
    throw new StopRun(reason, { code, message: this.stopMessage() }, stage);
  }

  private stopMessage(): string {
    switch (this.stopReason) {
      case 'aborted':
        return 'The run was aborted by its AbortSignal.';
      case 'timeout':
        return `The run exceeded limits.timeoutMs (${this.o.limits.timeoutMs} ms).`;
      case 'budget':
        return `The run used up limits.maxIterations (${this.o.limits.maxIterations} ReAct iterations).`;
      default:
        return 'The attempt did not complete.';
    }
  }

  /** Runs a stage call; an abort/timeout becomes a stop, any other throw a stage failure. */
  private async guard<T>(stage: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw this.asStop(error, stage);
    }
  }

  private asStop(error: unknown, stage: string): StopRun {
    if (this.stopReason) {
      const code: HarnessErrorCode = this.stopReason === 'budget' ? 'budget-exhausted' : this.stopReason;
      return new StopRun(this.stopReason, { code, message: this.stopMessage() }, stage);
    }
    const harnessError = toHarnessError(error);
    return new StopRun('error', { code: harnessError.code, message: harnessError.message }, stage);
  }

  private toolWarnings(): string[] {
    return this.init.registry.list().flatMap((tool) => (tool.warnings ?? []).map((w) => `${tool.name}: ${w}`));
  }

  private finish(failure: StopRun | undefined): RunResult {
    if (failure && (failure.reason === 'error' || failure.reason === 'budget')) {
      this.emit({ type: 'run-error', runId: this.init.runId, error: failure.error, stage: failure.stage });
    }
    if (!this.deliverable.answer && !this.deliverable.files.length) this.deliverable = partialDeliverable(this.records);
    for (const subtask of this.plan.slice(this.records.length)) {
      this.records.push({ ...subtask, status: 'skipped', attempts: 0, answer: '', files: [] });
    }
    let status: RunResult['status'] = 'succeeded';
    let error = failure?.error;
    if (failure) status = failure.reason === 'aborted' ? 'aborted' : failure.reason === 'timeout' ? 'timeout' : 'failed';
    else if (this.verdicts.at(-1)?.status === 'failed') {
      const last = this.verdicts.at(-1) as Verdict;
      status = 'failed';
      error = {
        code: 'verification-failed',
        message:
          `The deliverable still has ${last.defects.length} defect(s) after ${this.verdicts.length - 1} repair(s): ` +
          last.defects.map((d) => d.description).join(' | '),
      };
    }
    const base = {
      runId: this.init.runId,
      status,
      deliverable: this.deliverable,
      plan: this.plan,
      subtasks: this.records,
      verdicts: this.verdicts,
      workspace: this.init.workspace.root,
      ...(error ? { error } : {}),
    };
    const result: RunResult = {
      ...base,
      report: buildReport(this.log, {
        wallTimeMs: Math.max(0, this.init.now() - this.startedAt),
        subtasks: this.records,
        verdicts: this.verdicts,
      }),
    };
    this.emit({ type: 'run-finish', runId: this.init.runId, result });
    return result;
  }
}

function subtaskObjective(
  subtask: PlannedSubtask,
  index: number,
  total: number,
  attachments: readonly string[],
  previousError: string | undefined,
): string {
  const lines = [
    `Subtask ${index + 1} of ${total}: ${subtask.title}`,
    `Objective: ${subtask.objective}`,
    `Expected output: ${subtask.expectedOutput}`,
  ];
  if (attachments.length) lines.push(`Attached files in the workspace: ${attachments.join(', ')}`);
  if (previousError) {
    lines.push(`A previous attempt at this subtask failed: ${previousError}. Avoid what made it fail.`);
  }
  lines.push(
    'Do only this subtask, in service of the original request. Finish by calling submit_answer with a concise answer ' +
      'and the workspace-relative paths of the files you produced.',
  );
  return lines.join('\n');
}

/**
 * All file previews of one verification share the paper's parser budget (20 000 tokens), and never more than
 * half of a small window (at a conservative 3 characters per token), so the verify request still fits.
 */
function previewBudgetFor(contextWindow: number): number {
  const paperBudget = DEFAULTS.fileParserTokens * 4;
  return Math.max(1_000, Math.min(paperBudget, Math.floor(contextWindow * 0.5 * 3)));
}

function uniqueName(candidate: string, used: Set<string>): string {
  let name = candidate;
  const ext = path.posix.extname(candidate);
  const stem = candidate.slice(0, candidate.length - ext.length);
  for (let n = 2; used.has(name); n++) name = `${stem}-${n}${ext}`;
  used.add(name);
  return name;
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
