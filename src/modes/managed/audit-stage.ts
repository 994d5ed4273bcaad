/**
 * The audit stage of a managed round: the auditor checks the workspace with it fingerprinted around the audit, and
 * the update rule turns the verdict into record statuses.
 * @module
 */
import { MANAGED_DEFAULTS } from '../shared/managed-options.js';
import { claimScope } from './execution.js';
import { fingerprintedAudit, withRoundChecks } from './fingerprinted-audit.js';
import type { ManagedRunContext } from './run-context.js';
import type { ManagedPosition } from './snapshot.js';
import { applyAudit } from './state.js';

/**
 * Audits the round with the workspace fingerprinted around it, then applies the update rule. A resumed run audits
 * from the start: nothing of a cut-off audit was applied.
 */
export async function auditStage(
  run: ManagedRunContext,
  { round, contract, claim, changedByExecutor, harnessChanged = [] }: Extract<ManagedPosition, { stage: 'audit' }>,
): Promise<void> {
  const { control, init } = run;
  control.check('audit');
  const maxIterations = run.loopAllowance(run.o.auditorIterations, 'audit');
  // The auditor judges the environment, not the executor's trace: only the claim's full text stays readable.
  await run.discardTraces('audit', [claimScope(round)]);
  const before = run.p.fingerprint;
  const watched = await fingerprintedAudit(
    run.roles.auditor,
    {
      runId: init.runId,
      round,
      request: init.task,
      attachments: init.attachments,
      state: structuredClone(run.p.state),
      contract,
      claim,
      changedByExecutor,
      workspace: init.workspace,
      signal: control.controller.signal,
      maxIterations,
      timeoutMs: control.timeLeft(),
      dataMark: run.mark,
    },
    before,
  );
  const { outcome, thrown, after, changedPaths } = watched;
  // What someone other than the harness changed in `.harness/` during the execution or the audit.
  const harnessPaths = [...new Set([...harnessChanged, ...watched.harnessChanged])].sort();
  const violated = [...changedPaths, ...harnessPaths];
  run.spend(outcome?.iterations ?? 0);
  // A failed or cut-off audit is no evidence, unless it changed the workspace or the harness's state: that is recorded
  // whatever happened.
  if (violated.length === 0) {
    if (thrown !== undefined) throw control.asStop(thrown, 'audit');
    control.check('audit');
  }
  run.p.fingerprint = after;
  const reported = outcome?.verdict ?? {
    status: 'incomplete' as const,
    integrity: 'violation' as const,
    findings: [],
  };
  const checked = withRoundChecks(reported, { harnessChangedByExecutor: harnessChanged, audit: watched, before });
  const verdict = changedPaths.length ? { ...checked, integrity: 'violation' as const } : checked;
  run.p.state = applyAudit(run.p.state, {
    round,
    audit: `audit-${round}`,
    verdict,
    recordIds: contract.recordIds,
    changedPaths,
    evidenceChars: MANAGED_DEFAULTS.evidenceChars,
  });
  await control.guard('audit', () => run.saveStateFile(`audit-${round}`));
  if (violated.length) {
    run.emit({
      type: 'integrity-violation',
      runId: init.runId,
      round,
      changedPaths: violated,
      records: [...contract.recordIds],
    });
  }
  const fallback = outcome?.fallback ? { fallback: outcome.fallback } : {};
  const reason = outcome?.reason ?? (thrown === undefined ? undefined : `The audit failed: ${String(thrown)}`);
  run.emit({
    type: 'audit-finish',
    runId: init.runId,
    round,
    ...verdict,
    changedPaths,
    ...fallback,
    ...(reason ? { reason } : {}),
    state: structuredClone(run.p.state),
  });
  run.p.audits.push({
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
  await run.moveTo('audit', { stage: 'manage', round: round + 1 });
  await run.discardTraces('audit');
  if (thrown !== undefined) throw control.asStop(thrown, 'audit');
  control.failFast(outcome?.error, 'audit');
  control.check('audit');
}
