/**
 * The final verification of a managed run (the global check LongHorizon-Harness leaves out): after a `done` the
 * completion gate accepted, the Verifier judges the deliverable against the original request.
 * @module
 */
import type { VerifierLike } from '../../contracts/roles.js';
import type { EmitEvent } from '../../events.js';
import type { DataMark } from '../../prompts/datamark.js';
import type { Workspace } from '../../workspace/types.js';
import { producedFiles, unverifiedEnding, verifiedDeliverable } from './endings.js';
import type { ManagedProgress } from './progress.js';
import type { RunControlLike } from './run-init.js';
import type { ManagedPosition } from './snapshot.js';

/** What the check needs from the run. */
export interface FinalCheckRun {
  runId: string;
  /** The original request. */
  request: string;
  attachments: readonly string[];
  workspace: Workspace;
  verifier: VerifierLike;
  control: RunControlLike;
  emit: EmitEvent;
  mark: DataMark;
  /** The run's progress: the check reads the final answer and the produced files, and adds its verdict. */
  progress: ManagedProgress;
}

/**
 * Verifies the deliverable after round `round`'s accepted `done`: the manager's final answer and the files the
 * executors produced that still exist (previews of their content, their images), against the request and the
 * attachments. The verdict is added to the run's final verifications and reported in `verify-finish`; a failed one
 * also drops the final answer it rejected. Returns where the run goes on: `succeeded` when it passed, the manager's
 * next round (which shows it the defects) when it failed, `unverified` when no usable verdict could be had. A verifier
 * that throws stops the run like any failing stage.
 */
export async function checkDeliverable(run: FinalCheckRun, round: number): Promise<ManagedPosition> {
  const { control, progress } = run;
  control.check('verify');
  const attempt = progress.verifications.length + 1;
  const verdict = await control.guard('verify', () =>
    run.verifier.verify({
      request: run.request,
      deliverable: verifiedDeliverable(progress.answer, producedFiles(progress.produced, progress.fingerprint)),
      attachments: run.attachments,
      workspace: run.workspace,
      attempt,
      signal: control.controller.signal,
      runId: run.runId,
      dataMark: run.mark,
    }),
  );
  progress.verifications.push({ round, verdict });
  // A rejected answer is not the deliverable's: the manager gives a new one with its next `done`.
  if (verdict.status === 'failed') progress.answer = undefined;
  run.emit({
    type: 'verify-finish',
    runId: run.runId,
    attempt,
    status: verdict.status,
    passed: verdict.passed,
    verdict,
    defects: verdict.defects,
  });
  if (verdict.status === 'passed') return { stage: 'end', round, ending: { status: 'succeeded' } };
  if (verdict.status === 'unverified') return { stage: 'end', round, ending: unverifiedEnding(verdict) };
  return { stage: 'manage', round: round + 1 };
}
