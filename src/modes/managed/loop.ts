/**
 * One managed run (LongHorizon-Harness): the Manage-Execute-Audit loop over a task state kept outside every model
 * context, with the completion gate, integrity checks around audits, the run's budgets, and a snapshot before every
 * stage so that a resumed run goes on where it stopped.
 * @module
 */
import type { LoopCheckpoint } from '../../durability/types.js';
import { HarnessError } from '../../errors.js';
import type { EmitEvent, HarnessEvent } from '../../events.js';
import { DataMark } from '../../prompts/datamark.js';
import { raceSignal } from '../../util/race-signal.js';
import { blockedEnding, managedResult, outOfRounds, refusedDone, unansweredEnding } from './endings.js';
import { claimScope, executeContract, interruptedEpisode } from './execution.js';
import { checkDeliverable } from './final-check.js';
import { diffFingerprints, fingerprintedAudit, fingerprintWorkspace } from './integrity.js';
import { MANAGED_DEFAULTS, parseManagedOptions, type ResolvedManagedOptions } from '../shared/managed-options.js';
import { ManagedProgress } from './progress.js';
import { tallyManagedEvent } from './report.js';
import type { ManagedRunInit, ManagedRunResult, RunControlLike, RunStop } from './run-init.js';
import { pendingLoop, readManagedState, redoAt, type ManagedPosition } from './snapshot.js';
import { applyAudit, applyDrafts, saveTaskState } from './state.js';
import { discardTraces } from './traces.js';
import type { ManagerDecision } from '../../contracts/managed.js';
import { wireRoles, type ManagedRoles } from './wiring.js';
import { IterationBudget } from '../shared/iteration-budget.js';

export type { ManagedRunInit, ManagedRunResult, ReportFold, RunControlLike, RunStop } from './run-init.js';

/**
 * Runs one managed task to its end. Each round the manager decides from the request, the audited state and the audit
 * reports; `execute` runs the contract in a fresh context, then an audit checks it with the workspace fingerprinted
 * around it, and only the audit updates the state. The run succeeds only when the manager says `done`, every record
 * is completed by a clean audit and (unless `managed.finalVerification` is off) the final verification passes the
 * deliverable; a failed one goes back to the manager, one without a verdict ends the run `unverified`. Each executor
 * and audit loop is bounded by `limits.maxIterations`, all of them together by `limits.maxRunIterations` when set; the
 * rounds by `managed.maxRounds`. Resolves for every ending
 * (aborted, timed out, blocked, unverified, out of rounds, a failing stage) with the state as it stands; rejects only
 * for invalid options and for a snapshot that is not a managed run's (`resume-incompatible`). With `init.resume` it
 * goes on from that snapshot at the round and stage it was saved in.
 */
export async function runManaged<Tally>(init: ManagedRunInit<Tally>): Promise<ManagedRunResult> {
  return new ManagedRun(init).execute();
}

type Stage<S extends ManagedPosition['stage']> = Extract<ManagedPosition, { stage: S }>;

class ManagedRun<Tally> {
  private readonly o: ResolvedManagedOptions;
  private readonly control: RunControlLike;
  private readonly roles: ManagedRoles;
  private readonly startedAt: number;
  /** Time the run used before this resume. */
  private readonly usedBefore: number;
  private readonly mark: DataMark;
  /** Folds every event of the run into both report tallies, then sends it. */
  private readonly emit: EmitEvent;
  private readonly p: ManagedProgress;
  /** `limits.maxRunIterations` over every executor and audit loop of the run, resumed ones included. */
  private readonly budget: IterationBudget;
  /** The saved executor loop a resumed execution goes on from, until it is taken. */
  private savedLoop: LoopCheckpoint | undefined;

  constructor(private readonly init: ManagedRunInit<Tally>) {
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
      limits: init.limits,
      verifier: init.verifier,
    });
  }

  async execute(): Promise<ManagedRunResult> {
    const unwatch = this.control.watch(this.init.signal);
    let failure: RunStop | undefined;
    try {
      if (this.init.resume) this.announceResume();
      else await this.start();
      while (this.p.at.stage !== 'end' && this.p.at.round <= this.o.maxRounds) await this.step(this.p.at);
      if (this.p.at.stage !== 'end') {
        const last = this.p.verifications.at(-1);
        failure = outOfRounds(this.p.state, this.o.maxRounds, last?.verdict.status === 'failed' ? last : undefined);
      }
    } catch (error) {
      failure = this.control.asStop(error, 'managed');
    } finally {
      unwatch();
    }
    return this.finish(failure);
  }

  /** Stores the first snapshot, then emits `run-start`: a run whose start was seen can be resumed. */
  private async start(): Promise<void> {
    const stored = await this.firstSave().then(
      () => undefined,
      (error: unknown) => error,
    );
    this.emit({
      type: 'run-start',
      mode: 'managed',
      runId: this.init.runId,
      goal: this.init.task,
      workspace: this.init.workspace.root,
      // Managed mode always decomposes (the manager's records) and verifies (an audit after every execution).
      decomposition: true,
      verification: true,
      warnings: this.roles.warnings,
    });
    if (stored) throw stored;
  }

  private async firstSave(): Promise<void> {
    await this.control.guard('start', () => this.saveStateFile('start'));
    this.p.fingerprint = await fingerprintWorkspace(this.init.workspace.root);
    await this.control.guard('start', () => this.checkpoint());
  }

  private step(at: ManagedPosition): Promise<void> {
    switch (at.stage) {
      case 'manage':
        return this.manage(at.round);
      case 'ask':
        return this.ask(at);
      case 'execute':
        return this.executeContract(at);
      case 'audit':
        return this.audit(at);
      case 'verify':
        return this.verify(at);
      case 'end':
        return Promise.resolve();
    }
  }

  // ---- one round ----

  private async manage(round: number): Promise<void> {
    this.control.check('manage');
    const outcome = await this.control.guard('manage', () =>
      this.roles.manager.decide({
        runId: this.init.runId,
        round,
        request: this.init.task,
        attachments: this.init.attachments,
        state: structuredClone(this.p.state),
        audits: this.p.audits,
        answers: this.p.answers,
        feedback: this.p.feedback,
        verification: this.p.verifications.at(-1),
        auditorRunsCommands: this.roles.auditorRunsCommands,
        finalVerification: this.o.finalVerification,
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
    this.p.state = applyDrafts(this.p.state, decision.records, round);
    await this.control.guard('manage', () => this.saveStateFile(`manage-${round}`));
    this.emit({
      type: 'manager-decision',
      runId: this.init.runId,
      round,
      next: decision.next,
      records: decision.records,
      ...(decision.contract ? { contract: decision.contract } : {}),
      ...(decision.question ? { question: decision.question } : {}),
      ...(decision.reason ? { reason: decision.reason } : {}),
      ...(outcome.fallback ? { fallback: outcome.fallback } : {}),
      state: structuredClone(this.p.state),
    });
    this.p.feedback = [];
    // The decision is saved with the stage it leads to: a resumed run never asks the manager for it again.
    await this.moveTo('manage', this.next(round, decision));
  }

  /** Where a decision leads. */
  private next(round: number, decision: ManagerDecision): ManagedPosition {
    switch (decision.next) {
      case 'done': {
        const refused = refusedDone(this.p.state);
        if (refused) {
          this.p.feedback.push(refused);
          return { stage: 'manage', round: round + 1 };
        }
        this.p.answer = decision.answer;
        return this.o.finalVerification
          ? { stage: 'verify', round }
          : { stage: 'end', round, ending: { status: 'succeeded' } };
      }
      case 'blocked':
        return { stage: 'end', round, ending: blockedEnding(decision, this.p.state) };
      case 'ask':
        // Without onAsk the question ends the run blocked.
        return this.o.onAsk
          ? { stage: 'ask', round, question: decision.question ?? '' }
          : { stage: 'end', round, ending: unansweredEnding(decision.question ?? '') };
      case 'execute':
        return { stage: 'execute', round, contract: decision.contract as NonNullable<ManagerDecision['contract']> };
    }
  }

  /** Puts the manager's question to `managed.onAsk` (set: the decision led here only then). */
  private async ask({ round, question }: Stage<'ask'>): Promise<void> {
    const onAsk = this.o.onAsk as NonNullable<ResolvedManagedOptions['onAsk']>;
    const { signal } = this.control.controller;
    // A host waiting for a person may never answer; the run's abort and time limit still end the wait.
    const answer = await this.control.guard('ask', () =>
      raceSignal(
        Promise.resolve().then(() => onAsk(question, structuredClone(this.p.state))),
        signal,
        () => signal.reason,
      ),
    );
    this.p.answers.push({ question, answer: String(answer) });
    await this.moveTo('ask', { stage: 'manage', round: round + 1 });
  }

  private async executeContract(at: Stage<'execute'>): Promise<void> {
    const { round, contract } = at;
    this.control.check('execute');
    const maxIterations = this.loopAllowance(this.o.executorIterations, 'execute');
    const agent = this.roles.execution.agent;
    const resumeFrom = this.takeSavedLoop();
    // The loop going on from its checkpoint keeps its own saved outputs; nothing of an earlier round stays readable.
    await this.discardTraces('execute', resumeFrom ? [resumeFrom.scope] : []);
    // An external episode that was running when the run stopped is not started again: the audit finds what it did.
    const execution =
      agent && at.episodeStarted
        ? interruptedEpisode(agent.name)
        : await this.control.guard('execute', () =>
            executeContract(this.roles.execution, {
              runId: this.init.runId,
              round,
              request: this.init.task,
              attachments: this.init.attachments,
              contract,
              state: structuredClone(this.p.state),
              workspace: this.init.workspace,
              signal: this.control.controller.signal,
              maxIterations,
              timeoutMs: this.control.timeLeft(),
              dataMark: this.mark,
              resumeFrom,
              onCheckpoint: this.init.checkpointer ? (loop) => this.checkpoint(loop) : undefined,
              onEpisodeStart: () => this.moveTo('execute', { ...at, episodeStarted: true }),
            }),
          );
    this.spend(execution.iterations);
    // The built-in loop was given the run's time left: its timeout is the run's.
    if (this.roles.builtinExecutor && execution.claim.status === 'timeout') this.control.stop('timeout');
    this.control.failFast(execution.error, 'execute');
    if (execution.error?.code === 'store-failed') {
      throw this.control.asStop(new HarnessError('store-failed', execution.error.message), 'execute');
    }
    // A stopped run ends with the state as audited so far: an unaudited execution changes nothing.
    this.control.check('execute');
    const afterExecution = await fingerprintWorkspace(this.init.workspace.root);
    const changedByExecutor = diffFingerprints(this.p.fingerprint, afterExecution);
    for (const changed of changedByExecutor) this.p.produced.add(changed);
    // The audit compares against the workspace as the execution left it.
    this.p.fingerprint = afterExecution;
    await this.moveTo('execute', { stage: 'audit', round, contract, claim: execution.claim, changedByExecutor });
  }

  /**
   * Audits the round with the workspace fingerprinted around it, then applies the update rule. A resumed run audits
   * from the start: nothing of a cut-off audit was applied.
   */
  private async audit({ round, contract, claim, changedByExecutor }: Stage<'audit'>): Promise<void> {
    this.control.check('audit');
    const maxIterations = this.loopAllowance(this.o.auditorIterations, 'audit');
    // The auditor judges the environment, not the executor's trace: only the claim's full text stays readable.
    await this.discardTraces('audit', [claimScope(round)]);
    const { outcome, thrown, after, changedPaths } = await fingerprintedAudit(
      this.roles.auditor,
      {
        runId: this.init.runId,
        round,
        request: this.init.task,
        attachments: this.init.attachments,
        state: structuredClone(this.p.state),
        contract,
        claim,
        changedByExecutor,
        workspace: this.init.workspace,
        signal: this.control.controller.signal,
        maxIterations,
        timeoutMs: this.control.timeLeft(),
        dataMark: this.mark,
      },
      this.p.fingerprint,
    );
    this.spend(outcome?.iterations ?? 0);
    // A failed or cut-off audit is no evidence, unless it changed the workspace: that is recorded whatever happened.
    if (changedPaths.length === 0) {
      if (thrown !== undefined) throw this.control.asStop(thrown, 'audit');
      this.control.check('audit');
    }
    this.p.fingerprint = after;
    const reported = outcome?.verdict ?? {
      status: 'incomplete' as const,
      integrity: 'violation' as const,
      findings: [],
    };
    const verdict = changedPaths.length ? { ...reported, integrity: 'violation' as const } : reported;
    this.p.state = applyAudit(this.p.state, {
      round,
      audit: `audit-${round}`,
      verdict,
      recordIds: contract.recordIds,
      changedPaths,
      evidenceChars: MANAGED_DEFAULTS.evidenceChars,
    });
    await this.control.guard('audit', () => this.saveStateFile(`audit-${round}`));
    if (changedPaths.length) {
      this.emit({
        type: 'integrity-violation',
        runId: this.init.runId,
        round,
        changedPaths,
        records: [...contract.recordIds],
      });
    }
    const fallback = outcome?.fallback ? { fallback: outcome.fallback } : {};
    const reason = outcome?.reason ?? (thrown === undefined ? undefined : `The audit failed: ${String(thrown)}`);
    this.emit({
      type: 'audit-finish',
      runId: this.init.runId,
      round,
      ...verdict,
      changedPaths,
      ...fallback,
      ...(reason ? { reason } : {}),
      state: structuredClone(this.p.state),
    });
    this.p.audits.push({
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
    // The applied audit is saved before any stop below: a resumed run goes on with the next round.
    await this.moveTo('audit', { stage: 'manage', round: round + 1 });
    await this.discardTraces('audit');
    if (thrown !== undefined) throw this.control.asStop(thrown, 'audit');
    this.control.failFast(outcome?.error, 'audit');
    this.control.check('audit');
  }

  /** The final verification after an accepted `done` (see {@link checkDeliverable}). */
  private async verify({ round }: Stage<'verify'>): Promise<void> {
    const next = await checkDeliverable(
      {
        runId: this.init.runId,
        request: this.init.task,
        attachments: this.init.attachments,
        workspace: this.init.workspace,
        verifier: this.roles.verifier(),
        control: this.control,
        emit: this.emit,
        mark: this.mark,
        progress: this.p,
      },
      round,
    );
    await this.moveTo('verify', next);
  }

  /**
   * Deletes the saved tool outputs of every loop but `keep`'s (see `traces.ts`). A failure ends the run from `stage`:
   * a trace that could not be deleted would be readable by the next role.
   */
  /**
   * The iterations a role's loop may use this round: its own bound, at most `limits.maxIterations`, and no more than
   * `limits.maxRunIterations` has left. With none left the run stops (`budget-exhausted`) before the loop starts.
   */
  private loopAllowance(roleBound: number, stage: string): number {
    const allowance = this.budget.allowance(Math.min(roleBound, this.init.limits.maxIterations));
    if (allowance < 1) this.control.stop('budget');
    this.control.check(stage);
    return allowance;
  }

  private spend(iterations: number): void {
    this.p.iterationsUsed += iterations;
    this.budget.spend(iterations);
  }

  private discardTraces(stage: string, keep: readonly string[] = []): Promise<void> {
    return this.control.guard(stage, () => discardTraces(this.init.workspace.root, keep));
  }

  // ---- saving and resuming ----

  /** The copy of the task state for people to read (`.harness/task-state.json`); resumes read the snapshot. */
  private saveStateFile(scope: string): Promise<void> {
    return saveTaskState(this.init.workspace, this.p.state, scope);
  }

  /** Goes to the next position and saves it; a store that fails ends the run from `stage`. */
  private async moveTo(stage: string, next: ManagedPosition): Promise<void> {
    this.p.at = next;
    await this.control.guard(stage, () => this.checkpoint());
  }

  /**
   * Saves a snapshot of the run as it stands, with the executor loop in progress when there is one. Nothing is saved
   * once the run has stopped: an aborted run goes on from where it was, not from its wind-down (a cut-off tool call
   * or audit is then re-done or reported as interrupted, never taken as finished).
   */
  private checkpoint(loop?: LoopCheckpoint): Promise<void> {
    const checkpointer = this.init.checkpointer;
    if (!checkpointer || this.control.stopped) return Promise.resolve();
    const state = this.p.toSnapshot(this.init.attachments, this.init.baseReport.tally);
    const used = { iterations: this.p.iterationsUsed + (loop?.iterations ?? 0), elapsedMs: this.elapsed() };
    // Managed mode runs one executor loop at a time.
    return checkpointer.save({ state, used, ...(loop ? { loops: [loop] } : {}) });
  }

  /** The saved loop the resumed execution goes on from, once. */
  private takeSavedLoop(): LoopCheckpoint | undefined {
    const loop = this.savedLoop;
    this.savedLoop = undefined;
    return loop;
  }

  /** `run-resume`: where the run goes on and what it does again. */
  private announceResume(): void {
    const snapshot = this.init.resume;
    if (!snapshot) return;
    const loop = this.savedLoop;
    this.emit({
      type: 'run-resume',
      runId: this.init.runId,
      mode: 'managed',
      stage: this.p.at.stage,
      ...(loop ? { scopes: [loop.scope] } : {}),
      savedAt: snapshot.savedAt,
      redo: redoAt(this.p.at, loop, this.roles.execution.agent?.name),
    });
  }

  private elapsed(): number {
    return this.usedBefore + Math.max(0, this.init.now() - this.startedAt);
  }

  // ---- ending ----

  private async finish(failure: RunStop | undefined): Promise<ManagedRunResult> {
    const { runId } = this.init;
    if (failure && (failure.reason === 'error' || failure.reason === 'budget')) {
      this.emit({ type: 'run-error', runId, error: failure.error, stage: failure.stage });
    }
    const result = managedResult({
      runId,
      failure,
      ending: this.p.at.stage === 'end' ? this.p.at.ending : undefined,
      progress: this.p,
      report: (verdicts) => this.init.baseReport.report(this.elapsed(), verdicts),
      workspace: this.init.workspace.root,
    });
    const { status, error } = result;
    // An aborted run, and one whose store failed, keep their last snapshot `running`: resuming goes on from it.
    if (status !== 'aborted' && error?.code !== 'store-failed') await this.init.checkpointer?.finish(result);
    else await this.init.checkpointer?.idle();
    this.emit({ type: 'run-finish', runId, result });
    return result;
  }
}
