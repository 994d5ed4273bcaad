/**
 * One managed run (LongHorizon-Harness): the Manage-Execute-Audit loop over a task state kept outside every model
 * context, with the completion gate, integrity checks around audits, the run's budgets, and a snapshot before every
 * stage so that a resumed run goes on where it stopped. The execute and audit stages are in `execute-stage.ts` and
 * `audit-stage.ts`; what the stages share, and the saving, in `run-context.ts`.
 * @module
 */
import type { ManagerDecision } from '../../contracts/managed.js';
import { HarnessError } from '../../errors.js';
import { raceSignal } from '../../util/race-signal.js';
import type { ResolvedManagedOptions } from '../shared/managed-options.js';
import { memoryThresholdsOf } from '../shared/memory-thresholds.js';
import { auditStage } from './audit-stage.js';
import { typedResult, typedResultSkipped, type TypedResult } from '../shared/typed-result.js';
import { blockedEnding, deliverableOf, managedResult, outOfRounds, refusedDone, unansweredEnding } from './endings.js';
import { executeStage } from './execute-stage.js';
import { checkDeliverable } from './final-check.js';
import { fingerprintWorkspace } from './integrity.js';
import { ManagedRunContext } from './run-context.js';
import type { ManagedRunInit, ManagedRunResult, RunStop } from './run-init.js';
import { applyDrafts } from './state.js';
import { redoAt, type ManagedPosition } from './snapshot.js';

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
  return new ManagedRun(new ManagedRunContext(init)).execute();
}

type Stage<S extends ManagedPosition['stage']> = Extract<ManagedPosition, { stage: S }>;

class ManagedRun<Tally> {
  /** The typed result of `run({ output })`, once asked for. */
  private typed: TypedResult | undefined;

  constructor(private readonly run: ManagedRunContext<Tally>) {}

  async execute(): Promise<ManagedRunResult> {
    const { run } = this;
    const unwatch = run.control.watch(run.init.signal);
    let failure: RunStop | undefined;
    try {
      if (run.init.resume) this.announceResume();
      else await this.start();
      while (run.p.at.stage !== 'end' && run.p.at.round <= run.o.maxRounds) await this.step(run.p.at);
      if (run.p.at.stage !== 'end') {
        const last = run.p.verifications.at(-1);
        failure = outOfRounds(run.p.state, run.o.maxRounds, last?.verdict.status === 'failed' ? last : undefined);
      } else if (run.p.at.ending.status !== 'blocked') {
        await this.typedResult();
      }
    } catch (error) {
      failure = run.control.asStop(error, 'managed');
    } finally {
      unwatch();
    }
    return this.finish(failure);
  }

  /** Stores the first snapshot, then emits `run-start`: a run whose start was seen can be resumed. */
  private async start(): Promise<void> {
    const { run } = this;
    const stored = await this.firstSave().then(
      () => undefined,
      (error: unknown) => error,
    );
    run.emit({
      type: 'run-start',
      mode: 'managed',
      runId: run.init.runId,
      goal: run.init.task,
      workspace: run.init.workspace.root,
      // Managed mode always decomposes (the manager's records) and verifies (an audit after every execution).
      decomposition: true,
      verification: true,
      warnings: run.roles.warnings,
      ...memoryThresholdsOf(run.init.memory),
    });
    if (stored) throw stored;
  }

  private async firstSave(): Promise<void> {
    const { run } = this;
    await run.control.guard('start', () => run.saveStateFile('start'));
    run.p.fingerprint = await fingerprintWorkspace(run.init.workspace.root);
    await run.control.guard('start', () => run.checkpoint());
  }

  private step(at: ManagedPosition): Promise<void> {
    switch (at.stage) {
      case 'manage':
        return this.manage(at.round);
      case 'ask':
        return this.ask(at);
      case 'execute':
        return executeStage(this.run, at);
      case 'audit':
        return auditStage(this.run, at);
      case 'verify':
        return this.verify(at);
      case 'end':
        return Promise.resolve();
    }
  }

  // ---- one round ----

  private async manage(round: number): Promise<void> {
    const { run } = this;
    const { control, p } = run;
    control.check('manage');
    const outcome = await control.guard('manage', () =>
      run.roles.manager.decide({
        runId: run.init.runId,
        round,
        request: run.init.task,
        attachments: run.init.attachments,
        state: structuredClone(p.state),
        audits: p.audits,
        answers: p.answers,
        feedback: p.feedback,
        verification: p.verifications.at(-1),
        auditorRunsCommands: run.roles.auditorRunsCommands,
        finalVerification: run.o.finalVerification,
        signal: control.controller.signal,
        dataMark: run.mark,
      }),
    );
    const { decision } = outcome;
    if (decision.next === 'execute' && !decision.contract?.recordIds.length) {
      // Only a replacement manager can get here: the built-in one resolves every contract's records.
      const message = `The manager decided "execute" in round ${round} without a contract naming its records (contract.recordIds).`;
      throw control.asStop(new HarnessError('invalid-input', message), 'manage');
    }
    p.state = applyDrafts(p.state, decision.records, round);
    await control.guard('manage', () => run.saveStateFile(`manage-${round}`));
    run.emit({
      type: 'manager-decision',
      runId: run.init.runId,
      round,
      next: decision.next,
      records: decision.records,
      ...(decision.contract ? { contract: decision.contract } : {}),
      ...(decision.question ? { question: decision.question } : {}),
      ...(decision.reason ? { reason: decision.reason } : {}),
      ...(outcome.fallback ? { fallback: outcome.fallback } : {}),
      state: structuredClone(p.state),
    });
    p.feedback = [];
    // The decision is saved with the stage it leads to: a resumed run never asks the manager for it again.
    await run.moveTo('manage', this.next(round, decision));
  }

  /** Where a decision leads. */
  private next(round: number, decision: ManagerDecision): ManagedPosition {
    const { p, o } = this.run;
    switch (decision.next) {
      case 'done': {
        const refused = refusedDone(p.state);
        if (refused) {
          p.feedback.push(refused);
          return { stage: 'manage', round: round + 1 };
        }
        p.answer = decision.answer;
        return o.finalVerification
          ? { stage: 'verify', round }
          : { stage: 'end', round, ending: { status: 'succeeded' } };
      }
      case 'blocked':
        return { stage: 'end', round, ending: blockedEnding(decision, p.state) };
      case 'ask':
        // Without onAsk the question ends the run blocked.
        return o.onAsk
          ? { stage: 'ask', round, question: decision.question ?? '' }
          : { stage: 'end', round, ending: unansweredEnding(decision.question ?? '') };
      case 'execute':
        return { stage: 'execute', round, contract: decision.contract as NonNullable<ManagerDecision['contract']> };
    }
  }

  /** Puts the manager's question to `managed.onAsk` (set: the decision led here only then). */
  private async ask({ round, question }: Stage<'ask'>): Promise<void> {
    const { run } = this;
    const onAsk = run.o.onAsk as NonNullable<ResolvedManagedOptions['onAsk']>;
    const { signal } = run.control.controller;
    // A host waiting for a person may never answer; the run's abort and time limit still end the wait.
    const answer = await run.control.guard('ask', () =>
      raceSignal(
        Promise.resolve().then(() => onAsk(question, structuredClone(run.p.state))),
        signal,
        () => signal.reason,
      ),
    );
    run.p.answers.push({ question, answer: String(answer) });
    await run.moveTo('ask', { stage: 'manage', round: round + 1 });
  }

  /** The final verification after an accepted `done` (see {@link checkDeliverable}). */
  private async verify({ round }: Stage<'verify'>): Promise<void> {
    const { run } = this;
    const next = await checkDeliverable(
      {
        runId: run.init.runId,
        request: run.init.task,
        attachments: run.init.attachments,
        workspace: run.init.workspace,
        verifier: run.roles.verifier(),
        control: run.control,
        emit: run.emit,
        mark: run.mark,
        progress: run.p,
      },
      round,
    );
    await run.moveTo('verify', next);
  }

  /** `run-resume`: where the run goes on and what it does again. */
  private announceResume(): void {
    const { run } = this;
    const snapshot = run.init.resume;
    if (!snapshot) return;
    const loop = run.pendingLoop;
    run.emit({
      type: 'run-resume',
      runId: run.init.runId,
      mode: 'managed',
      stage: run.p.at.stage,
      ...(loop ? { scopes: [loop.scope] } : {}),
      savedAt: snapshot.savedAt,
      redo: redoAt(run.p.at, loop, run.roles.execution.agent?.name),
    });
  }

  // ---- ending ----

  /** The typed result of `run({ output })`, asked for the final deliverable of a run that ended `succeeded` or `unverified`. */
  private async typedResult(): Promise<void> {
    const { run } = this;
    const output = run.init.output;
    if (!output) return;
    run.control.check('output');
    const deliverable = deliverableOf(run.p.state, run.p.produced, run.p.fingerprint, run.p.answer);
    this.typed = await run.control.guard('output', () =>
      typedResult({
        request: output.request,
        call: { ...output.call, emit: run.emit },
        runId: run.init.runId,
        task: run.init.task,
        deliverable,
        mark: run.mark,
        emit: run.emit,
      }),
    );
  }

  private async finish(failure: RunStop | undefined): Promise<ManagedRunResult> {
    const { run } = this;
    const { runId } = run.init;
    if (failure && (failure.reason === 'error' || failure.reason === 'budget')) {
      run.emit({ type: 'run-error', runId, error: failure.error, stage: failure.stage });
    }
    const managed = managedResult({
      runId,
      failure,
      ending: run.p.at.stage === 'end' ? run.p.at.ending : undefined,
      progress: run.p,
      report: (verdicts) => run.init.baseReport.report(run.elapsed(), verdicts),
      workspace: run.init.workspace.root,
    });
    const result = run.init.output ? { ...managed, ...(this.typed ?? typedResultSkipped(managed.status)) } : managed;
    const { status, error } = result;
    // An aborted run, and one whose store failed, keep their last snapshot `running`: resuming goes on from it.
    if (status !== 'aborted' && error?.code !== 'store-failed') await run.init.checkpointer?.finish(result);
    else await run.init.checkpointer?.idle();
    run.emit({ type: 'run-finish', runId, result });
    return result;
  }
}
