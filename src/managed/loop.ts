/**
 * One managed run (LongHorizon-Harness): the Manage-Execute-Audit loop over a task state kept outside every model
 * context, with the completion gate, integrity checks around audits, and the run's budgets.
 * @module
 */
import type { LlmBackend, Purpose } from '../backend/types.js';
import { HarnessError, type HarnessErrorCode } from '../errors.js';
import type { EmitEvent, HarnessEvent } from '../events.js';
import type { Sampling } from '../llm/call-model.js';
import type { ExecutionMemory } from '../memory/types.js';
import { headTail } from '../memory/truncate.js';
import type { Contract, TaskState } from '../pipeline/task-state.js';
import type { Deliverable, RunReport, RunResult } from '../pipeline/types.js';
import type { ToolRegistry } from '../tools/registry.js';
import { raceSignal } from '../util/race-signal.js';
import type { Workspace } from '../workspace/types.js';
import { executeContract } from './execution.js';
import { diffFingerprints, fingerprintWorkspace, type Fingerprint } from './integrity.js';
import { MANAGED_DEFAULTS, parseManagedOptions, type ManagedOptions, type ResolvedManagedOptions } from './options.js';
import { DataMark } from '../prompts/datamark.js';
import { renderState } from './prompts.js';
import { buildManagedReport, type ManagedReport, type ManagedRunReport } from './report.js';
import { applyAudit, applyDrafts, emptyTaskState, openRecords, saveTaskState } from './state.js';
import type { AnsweredQuestion, AuditOutcome, AuditReport, ExecutionClaim, ManagerDecision } from './types.js';
import { wireRoles, type ManagedRoles } from './wiring.js';

/** How a run stopped early, as a {@link RunControlLike} reports it. */
export interface RunStop {
  reason: 'aborted' | 'timeout' | 'budget' | 'error';
  error: { code: string; message: string };
  stage: string;
}

/**
 * The run's stop state (the harness's `RunControl` fits): one abort controller for everything in flight, the time
 * limit, and how a thrown error becomes the run's stop.
 */
export interface RunControlLike {
  /** Aborted when the run stops. */
  readonly controller: AbortController;
  readonly stopped: 'aborted' | 'timeout' | 'budget' | undefined;
  /** Watches the caller's signal and the time limit; returns the function that stops watching. */
  watch(signal: AbortSignal | undefined): () => void;
  stop(reason: 'aborted' | 'timeout' | 'budget'): void;
  /** Milliseconds the run has left. */
  timeLeft(): number;
  /** Throws the stop when the run has stopped. */
  check(stage: string): void;
  /** Throws at once for an error no retry can cure (wrong credentials, unknown model). */
  failFast(error: { code: HarnessErrorCode; message: string } | undefined, stage: string): void;
  /** Runs a stage call; a throw becomes the run's stop. */
  guard<T>(stage: string, fn: () => Promise<T>): Promise<T>;
  /** The stop a thrown error means. */
  asStop(error: unknown, stage: string): RunStop;
}

/** Everything one managed run starts from. */
export interface ManagedRunInit {
  runId: string;
  /** The original request. */
  task: string;
  /** Already copied into the workspace; workspace-relative. */
  attachments: string[];
  workspace: Workspace;
  signal: AbortSignal | undefined;
  now: () => number;
  /** Stamps and sends an event, and adds it to `log`. */
  emit: EmitEvent;
  /** The run's events so far, for the report. */
  log: readonly HarnessEvent[];
  /** The backend of a role: `manage`, `audit`, `execute`, `summarize`, `vision`. */
  backendFor: (role: Purpose) => LlmBackend;
  samplingFor: (role: Purpose) => Sampling | undefined;
  /** The configured output reserve (`limits.maxOutputTokens`). */
  maxOutputTokens: number;
  memory: ExecutionMemory;
  /** The host's tools: all of them for the executor, the read-only ones for the auditor. */
  registry: ToolRegistry;
  limits: { maxIterations: number; timeoutMs: number; toolTimeoutMs: number };
  /** The `managed` options (parsed again here, so raw or parsed both work). */
  options: ManagedOptions;
  /** The run's stop state, built from `limits` (the harness passes `new RunControl(limits)`). */
  control: RunControlLike;
  /** The pipeline's report of the run's events (the harness passes its `buildReport`); the `managed` section is added. */
  baseReport: (log: readonly HarnessEvent[], wallTimeMs: number) => RunReport;
  /** The run's boundary of untrusted text in every prompt. @defaultValue a fresh `DataMark.random()` */
  dataMark?: DataMark;
}

/** A managed run's result: `taskState` is always set and the report has its `managed` section. */
export type ManagedRunResult = RunResult & { report: ManagedRunReport; taskState: TaskState };

/**
 * Runs one managed task to its end. Each round the manager decides from the request, the audited state and the audit
 * reports; `execute` runs the contract in a fresh context, then an audit checks it with the workspace fingerprinted
 * around it, and only the audit updates the state. The run succeeds only when the manager says `done` and every
 * record is completed by a clean audit. Resolves for every ending (aborted, timed out, blocked, out of rounds or
 * iterations, a failing stage) with the state as it stands; rejects only for invalid options.
 */
export function runManaged(init: ManagedRunInit): Promise<ManagedRunResult> {
  return new ManagedRun(init).execute();
}

/** How the loop ended when it was not stopped. */
type Ending =
  | { status: 'succeeded' }
  | { status: 'blocked'; message: string; blocked: NonNullable<ManagedReport['blocked']> };

class ManagedRun {
  private readonly o: ResolvedManagedOptions;
  private readonly control: RunControlLike;
  private readonly roles: ManagedRoles;
  private readonly startedAt: number;
  private state: TaskState = emptyTaskState();
  private fingerprint: Fingerprint = new Map();
  private readonly audits: AuditReport[] = [];
  private readonly answers: AnsweredQuestion[] = [];
  private feedback: string[] = [];
  /** Paths the executors created or changed, for the deliverable. */
  private readonly produced = new Set<string>();
  private iterationsUsed = 0;
  private ending: Ending | undefined;
  private readonly mark: DataMark;

  constructor(private readonly init: ManagedRunInit) {
    this.o = parseManagedOptions(init.options);
    this.control = init.control;
    this.mark = init.dataMark ?? DataMark.random();
    this.startedAt = init.now();
    this.roles = wireRoles(this.o, {
      runId: init.runId,
      workspace: init.workspace,
      emit: init.emit,
      now: init.now,
      signal: this.control.controller.signal,
      backendFor: init.backendFor,
      samplingFor: init.samplingFor,
      maxOutputTokens: init.maxOutputTokens,
      memory: init.memory,
      registry: init.registry,
      limits: init.limits,
    });
  }

  async execute(): Promise<ManagedRunResult> {
    const unwatch = this.control.watch(this.init.signal);
    let failure: RunStop | undefined;
    try {
      this.init.emit({
        type: 'run-start',
        mode: 'managed',
        runId: this.init.runId,
        goal: this.init.task,
        workspace: this.init.workspace.root,
        // Managed mode always decomposes (the manager's records) and verifies (an audit after every execution).
        decomposition: true,
        verification: true,
        warnings: this.init.registry.list().flatMap((tool) => (tool.warnings ?? []).map((w) => `${tool.name}: ${w}`)),
      });
      await this.control.guard('start', () => this.save('start'));
      this.fingerprint = await fingerprintWorkspace(this.init.workspace.root);
      for (let round = 1; round <= this.o.maxRounds && !this.ending; round++) await this.round(round);
      if (!this.ending) failure = this.outOfRounds();
    } catch (error) {
      failure = this.control.asStop(error, 'managed');
    } finally {
      unwatch();
    }
    return this.finish(failure);
  }

  // ---- one round ----

  private async round(round: number): Promise<void> {
    this.control.check('manage');
    const outcome = await this.control.guard('manage', () =>
      this.roles.manager.decide({
        runId: this.init.runId,
        round,
        request: this.init.task,
        attachments: this.init.attachments,
        state: structuredClone(this.state),
        audits: this.audits,
        answers: this.answers,
        feedback: this.feedback,
        signal: this.control.controller.signal,
        dataMark: this.mark,
      }),
    );
    const { decision } = outcome;
    if (decision.next === 'execute' && !decision.contract?.recordIds.length) {
      // Only a replacement manager can get here: the built-in one resolves every contract's records.
      const message = `The manager decided "execute" in round ${round} without a contract naming its records (contract.recordIds).`;
      throw this.control.asStop(new HarnessError('invalid-input', message), 'manage');
    }
    this.state = applyDrafts(this.state, decision.records, round);
    await this.control.guard('manage', () => this.save(`manage-${round}`));
    this.init.emit({
      type: 'manager-decision',
      runId: this.init.runId,
      round,
      next: decision.next,
      records: decision.records,
      ...(decision.contract ? { contract: decision.contract } : {}),
      ...(decision.question ? { question: decision.question } : {}),
      ...(decision.reason ? { reason: decision.reason } : {}),
      ...(outcome.fallback ? { fallback: outcome.fallback } : {}),
      state: structuredClone(this.state),
    });
    this.feedback = [];
    switch (decision.next) {
      case 'done':
        return this.done();
      case 'blocked':
        return this.blocked(decision);
      case 'ask':
        return this.ask(decision.question ?? '');
      case 'execute':
        return this.executeAndAudit(round, decision.contract as Contract);
    }
  }

  /** The completion gate: `done` counts only when every record is completed by a clean audit. */
  private done(): void {
    const open = openRecords(this.state);
    if (this.state.records.length > 0 && open.length === 0) {
      this.ending = { status: 'succeeded' };
      return;
    }
    this.feedback.push(
      open.length
        ? `You answered "done", but these records are not completed by a clean audit: ${open
            .map((r) => `${r.id} (${r.status}${r.reason ? `: ${headTail(r.reason, 300)}` : ''})`)
            .join(
              '; ',
            )}. Only audits complete records: give an execute contract for them, or "blocked" if they cannot be done.`
        : 'You answered "done", but the task state has no records. Describe the work as records and execute it: nothing is done until an audit shows it.',
    );
  }

  private blocked(decision: ManagerDecision): void {
    const reasons = [
      decision.reason || 'The manager gave no reason.',
      ...this.state.records.filter((r) => r.status === 'blocked').map((r) => `${r.id}: ${r.reason ?? 'blocked'}`),
    ];
    this.ending = {
      status: 'blocked',
      message: `The manager reports the task blocked: ${reasons.join(' | ')}`,
      blocked: { reasons },
    };
  }

  /** Puts the manager's question to `managed.onAsk`; without one, the question ends the run `blocked`. */
  private async ask(question: string): Promise<void> {
    const onAsk = this.o.onAsk;
    if (!onAsk) {
      this.ending = {
        status: 'blocked',
        message: `The manager asked a question and no managed.onAsk is set to answer it: ${question}`,
        blocked: { reasons: [], question },
      };
      return;
    }
    const { signal } = this.control.controller;
    // A host waiting for a person may never answer; the run's abort and time limit still end the wait.
    const answer = await this.control.guard('ask', () =>
      raceSignal(
        Promise.resolve().then(() => onAsk(question, structuredClone(this.state))),
        signal,
        () => signal.reason,
      ),
    );
    this.answers.push({ question, answer: String(answer) });
  }

  private async executeAndAudit(round: number, contract: Contract): Promise<void> {
    if (this.roles.executorUsesIterations && this.executorIterations() < 1) this.control.stop('budget');
    this.control.check('execute');
    const execution = await this.control.guard('execute', () =>
      executeContract(this.roles.execution, {
        runId: this.init.runId,
        round,
        request: this.init.task,
        attachments: this.init.attachments,
        contract,
        state: structuredClone(this.state),
        workspace: this.init.workspace,
        signal: this.control.controller.signal,
        maxIterations: this.executorIterations(),
        timeoutMs: this.control.timeLeft(),
        dataMark: this.mark,
      }),
    );
    this.iterationsUsed += execution.iterations;
    // The built-in loop was given the run's time left: its timeout is the run's.
    if (this.roles.executorUsesIterations && execution.claim.status === 'timeout') this.control.stop('timeout');
    this.control.failFast(execution.error, 'execute');
    // A stopped run ends with the state as audited so far: an unaudited execution changes nothing.
    this.control.check('execute');
    const afterExecution = await fingerprintWorkspace(this.init.workspace.root);
    const changedByExecutor = diffFingerprints(this.fingerprint, afterExecution);
    for (const changed of changedByExecutor) this.produced.add(changed);
    await this.audit(round, contract, execution.claim, changedByExecutor, afterExecution);
  }

  /** Audits the round with the workspace fingerprinted around it, then applies the update rule. */
  private async audit(
    round: number,
    contract: Contract,
    claim: ExecutionClaim,
    changedByExecutor: string[],
    before: Fingerprint,
  ): Promise<void> {
    const maxIterations = Math.min(this.o.auditorIterations, this.iterationsLeft());
    if (this.roles.auditorUsesIterations && maxIterations < 1) this.control.stop('budget');
    this.control.check('audit');
    let outcome: AuditOutcome | undefined;
    let thrown: unknown;
    try {
      outcome = await this.roles.auditor.audit({
        runId: this.init.runId,
        round,
        request: this.init.task,
        attachments: this.init.attachments,
        state: structuredClone(this.state),
        contract,
        claim,
        changedByExecutor,
        workspace: this.init.workspace,
        signal: this.control.controller.signal,
        maxIterations,
        timeoutMs: this.control.timeLeft(),
        dataMark: this.mark,
      });
    } catch (error) {
      thrown = error;
    }
    this.iterationsUsed += outcome?.iterations ?? 0;
    const after = await fingerprintWorkspace(this.init.workspace.root);
    this.fingerprint = after;
    const changedPaths = diffFingerprints(before, after);
    // A failed or cut-off audit is no evidence, unless it changed the workspace: that is recorded whatever happened.
    if (changedPaths.length === 0) {
      if (thrown !== undefined) throw this.control.asStop(thrown, 'audit');
      this.control.check('audit');
    }
    const reported = outcome?.verdict ?? {
      status: 'incomplete' as const,
      integrity: 'violation' as const,
      findings: [],
    };
    const verdict = changedPaths.length ? { ...reported, integrity: 'violation' as const } : reported;
    this.state = applyAudit(this.state, {
      round,
      audit: `audit-${round}`,
      verdict,
      recordIds: contract.recordIds,
      changedPaths,
      evidenceChars: MANAGED_DEFAULTS.evidenceChars,
    });
    await this.control.guard('audit', () => this.save(`audit-${round}`));
    if (changedPaths.length) {
      this.init.emit({
        type: 'integrity-violation',
        runId: this.init.runId,
        round,
        changedPaths,
        records: [...contract.recordIds],
      });
    }
    const fallback = outcome?.fallback ? { fallback: outcome.fallback } : {};
    const reason = outcome?.reason ?? (thrown === undefined ? undefined : `The audit failed: ${String(thrown)}`);
    this.init.emit({
      type: 'audit-finish',
      runId: this.init.runId,
      round,
      ...verdict,
      changedPaths,
      ...fallback,
      ...(reason ? { reason } : {}),
      state: structuredClone(this.state),
    });
    this.audits.push({
      ...verdict,
      round,
      contract,
      execution: {
        agent: claim.agent,
        status: claim.status,
        ...(claim.exitCode === undefined ? {} : { exitCode: claim.exitCode }),
      },
      changedPaths,
      ...fallback,
      ...(reason ? { reason } : {}),
    });
    if (thrown !== undefined) throw this.control.asStop(thrown, 'audit');
    this.control.failFast(outcome?.error, 'audit');
    this.control.check('audit');
  }

  // ---- budget, saving, ending ----

  private iterationsLeft(): number {
    return Math.max(0, this.init.limits.maxIterations - this.iterationsUsed);
  }

  /** The executor's iterations this round: its per-round share, keeping what the round's audit may need. */
  private executorIterations(): number {
    const left = this.iterationsLeft();
    const keep = this.roles.auditorUsesIterations ? Math.min(this.o.auditorIterations, Math.ceil(left / 2)) : 0;
    return Math.min(this.o.executorIterations, left - keep);
  }

  private save(scope: string): Promise<void> {
    return saveTaskState(this.init.workspace, this.state, scope);
  }

  private outOfRounds(): RunStop {
    const open = openRecords(this.state).map((r) => r.id);
    return {
      reason: 'error',
      error: {
        code: 'budget-exhausted',
        message:
          `The run used managed.maxRounds (${this.o.maxRounds}) rounds without a "done" on a fully audited state` +
          (open.length ? `; open records: ${open.join(', ')}.` : '.'),
      },
      stage: 'manage',
    };
  }

  private finish(failure: RunStop | undefined): ManagedRunResult {
    const { runId } = this.init;
    if (failure && (failure.reason === 'error' || failure.reason === 'budget')) {
      this.init.emit({ type: 'run-error', runId, error: failure.error, stage: failure.stage });
    }
    let status: RunResult['status'];
    let error: RunResult['error'];
    if (failure) {
      status = failure.reason === 'aborted' || failure.reason === 'timeout' ? failure.reason : 'failed';
      error = failure.error;
    } else if (this.ending?.status === 'blocked') {
      status = 'blocked';
      error = { code: 'blocked', message: this.ending.message };
    } else {
      status = 'succeeded';
    }
    const blocked = !failure && this.ending?.status === 'blocked' ? this.ending.blocked : undefined;
    const wallTimeMs = Math.max(0, this.init.now() - this.startedAt);
    const report: ManagedRunReport = {
      ...this.init.baseReport(this.init.log, wallTimeMs),
      managed: buildManagedReport(this.init.log, this.state, blocked),
    };
    const result: ManagedRunResult = {
      runId,
      status,
      deliverable: this.deliverable(),
      plan: [],
      subtasks: [],
      verdicts: [],
      report,
      workspace: this.init.workspace.root,
      ...(error ? { error } : {}),
      taskState: structuredClone(this.state),
    };
    this.init.emit({ type: 'run-finish', runId, result });
    return result;
  }

  /** The audited state in words, and every file the executors created or changed that is still there. */
  private deliverable(): Deliverable {
    const done = this.state.records.filter((r) => r.status === 'completed').length;
    const answer =
      `Task state after round ${this.state.round}: ${done} of ${this.state.records.length} record(s) completed by clean audits.\n` +
      renderState(this.state, MANAGED_DEFAULTS.evidenceShown);
    const files = [...this.produced].filter((file) => this.fingerprint.get(file)?.startsWith('file:')).sort();
    return { answer, files };
  }
}
