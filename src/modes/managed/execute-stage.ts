/**
 * The execute stage of a managed round: the contract carried out in a fresh context, and the workspace paths the
 * execution changed, measured for the audit that follows.
 * @module
 */
import { HarnessError } from '../../errors.js';
import { executeContract, interruptedEpisode } from './execution.js';
import { diffFingerprints, fingerprintHarnessState, fingerprintWorkspace } from './integrity.js';
import type { ManagedRunContext } from './run-context.js';
import type { ManagedPosition } from './snapshot.js';

/**
 * Runs the round's contract (the built-in loop going on from its saved checkpoint, or an external agent's episode,
 * never started twice), then saves the audit stage with the claim and the paths that changed.
 */
export async function executeStage(
  run: ManagedRunContext,
  at: Extract<ManagedPosition, { stage: 'execute' }>,
): Promise<void> {
  const { round, contract } = at;
  const { control, init } = run;
  control.check('execute');
  const maxIterations = run.loopAllowance(run.o.executorIterations, 'execute');
  const agent = run.roles.execution.agent;
  const resumeFrom = run.takeSavedLoop();
  // The loop going on from its checkpoint keeps its own saved outputs; nothing of an earlier round stays readable.
  await run.discardTraces('execute', resumeFrom ? [resumeFrom.scope] : []);
  // The built-in loop saves snapshots between its steps; an external agent's episode runs after the last save.
  const builtinSaves = agent === undefined;
  let harnessBefore = await fingerprintHarnessState(init.workspace.root, builtinSaves);
  // An external episode that was running when the run stopped is not started again: the audit finds what it did.
  const execution =
    agent && at.episodeStarted
      ? interruptedEpisode(agent.name)
      : await control.guard('execute', () =>
          executeContract(run.roles.execution, {
            runId: init.runId,
            round,
            request: init.task,
            attachments: init.attachments,
            contract,
            state: structuredClone(run.p.state),
            workspace: init.workspace,
            signal: control.controller.signal,
            maxIterations,
            timeoutMs: control.timeLeft(),
            dataMark: run.mark,
            resumeFrom,
            onCheckpoint: init.checkpointer ? (loop) => run.checkpoint(loop) : undefined,
            onEpisodeStart: async () => {
              await run.moveTo('execute', { ...at, episodeStarted: true });
              harnessBefore = await fingerprintHarnessState(init.workspace.root);
            },
          }),
        );
  run.spend(execution.iterations);
  // The built-in loop was given the run's time left: its timeout is the run's.
  if (run.roles.builtinExecutor && execution.claim.status === 'timeout') control.stop('timeout');
  control.failFast(execution.error, 'execute');
  if (execution.error?.code === 'store-failed') {
    throw control.asStop(new HarnessError('store-failed', execution.error.message), 'execute');
  }
  // A stopped run ends with the state as audited so far: an unaudited execution changes nothing.
  control.check('execute');
  const afterExecution = await fingerprintWorkspace(init.workspace.root);
  const harnessAfter = await fingerprintHarnessState(init.workspace.root, builtinSaves);
  const harnessChanged = diffFingerprints(harnessBefore, harnessAfter);
  const changedByExecutor = diffFingerprints(run.p.fingerprint, afterExecution);
  for (const changed of changedByExecutor) run.p.produced.add(changed);
  // The audit compares against the workspace as the execution left it.
  run.p.fingerprint = afterExecution;
  await run.moveTo('execute', {
    stage: 'audit',
    round,
    contract,
    claim: execution.claim,
    changedByExecutor,
    ...(harnessChanged.length ? { harnessChanged } : {}),
  });
}
