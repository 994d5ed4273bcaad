/**
 * The pipeline's last stage: verify, then repair and verify again while defects remain and repairs are left. Each
 * step is recorded in the run's state, so that a resumed run takes the stage up at the step it stopped in.
 * @module
 */
import type { RepairerLike, VerifierLike } from '../../contracts/roles.js';
import type { Defect, Verdict } from '../../contracts/work.js';
import { withInterruptedCalls } from '../../handoff/checkpoints.js';
import type { StageContext } from './stage-context.js';

/** Runs verification and the repairs it calls for, from wherever the run's state says the stage is. @internal */
export async function verifyStage(run: StageContext): Promise<void> {
  const verifier = run.roles.verifier();
  const repairer = run.roles.repairer();
  const s = run.s;
  for (;;) {
    if (s.repairing !== null) await repairOnce(run, repairer, s.repairing);
    else if (s.verdicts.length === s.repairs) await verifyOnce(run, verifier, s.verdicts.length + 1);
    else if (!(await startRepair(run))) return;
  }
}

async function verifyOnce(run: StageContext, verifier: VerifierLike, attempt: number): Promise<void> {
  run.control.check('verify');
  const verdict = await run.control.guard('verify', () =>
    verifier.verify({
      request: run.task,
      deliverable: run.s.deliverable,
      // Without decomposition the one loop's answer is the deliverable's: there are no subtask answers to compare.
      subtaskAnswers: run.o.decomposition ? run.s.records : [],
      attachments: run.attachments,
      workspace: run.workspace,
      attempt,
      signal: run.control.controller.signal,
      runId: run.runId,
      dataMark: run.mark,
    }),
  );
  run.s.verdicts.push(verdict);
  run.emit({
    type: 'verify-finish',
    runId: run.runId,
    attempt,
    status: verdict.status,
    passed: verdict.passed,
    verdict,
    defects: verdict.defects,
  });
  await run.checkpoint('verify');
}

/** Starts the next repair when the last verdict failed and repairs are left; false when verification is over. */
async function startRepair(run: StageContext): Promise<boolean> {
  const verdict = run.s.verdicts.at(-1);
  const attempt = run.s.repairs + 1;
  if (verdict?.status !== 'failed' || attempt > run.o.limits.repairAttempts) return false;
  if (run.budget.allowance(run.o.limits.repairIterations) < 1) run.control.stop('budget');
  run.control.check('repair');
  run.s.repairing = attempt;
  run.emit({ type: 'repair-start', runId: run.runId, attempt, defects: verdict.defects });
  await run.checkpoint('repair');
  return true;
}

async function repairOnce(run: StageContext, repairer: RepairerLike, attempt: number): Promise<void> {
  const defects = run.s.verdicts.at(-1)?.defects ?? [];
  const outcome = await run.control.guard('repair', () =>
    repairer.repair({
      runId: run.runId,
      request: run.task,
      deliverable: run.s.deliverable,
      defects,
      subtasks: run.s.records,
      fixedDefects: fixedDefectsOf(run.s.verdicts),
      attempt,
      workspace: run.workspace,
      signal: run.control.controller.signal,
      maxIterations: run.budget.allowance(run.o.limits.repairIterations),
      timeoutMs: run.control.timeLeft(),
      dataMark: run.mark,
    }),
  );
  run.book(outcome.executor, 'repair');
  run.control.failFast(outcome.executor.error, 'repair');
  // A failed repair leaves the deliverable as it was; its defects stay open for the next verification. The calls a
  // crash interrupted stay named either way, with the repair's own (a failed repair may have half-done one).
  const interrupted = [...(run.s.deliverable.interruptedCalls ?? []), ...(outcome.executor.interruptedCalls ?? [])];
  const repaired = outcome.status === 'completed' ? outcome.deliverable : run.s.deliverable;
  run.s.deliverable = withInterruptedCalls(repaired, interrupted);
  run.s.repairing = null;
  run.s.repairs = attempt;
  run.emit({
    type: 'repair-finish',
    runId: run.runId,
    attempt,
    status: outcome.status,
    deliverable: run.s.deliverable,
  });
  await run.checkpoint('repair');
  run.control.check('repair');
}

/**
 * The defects of the verdicts before the last that the last one no longer lists (by description and file), each once:
 * what earlier repairs fixed, as far as verification can tell.
 */
function fixedDefectsOf(verdicts: readonly Verdict[]): Defect[] {
  const key = (d: Defect) => `${d.description.trim()}\u0000${d.artifact ?? ''}`;
  const open = new Set((verdicts.at(-1)?.defects ?? []).map(key));
  const fixed = new Map<string, Defect>();
  for (const verdict of verdicts.slice(0, -1)) {
    for (const defect of verdict.defects) if (!open.has(key(defect))) fixed.set(key(defect), defect);
  }
  return [...fixed.values()];
}
