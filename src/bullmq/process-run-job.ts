/**
 * What a run worker does with one job: run the job's run, or resume it from its snapshot when an earlier attempt
 * (a worker that died, stalled or closed) left one.
 * @module
 */
import path from 'node:path';
import type { Job } from 'bullmq';
import type { Harness } from '../harness/harness.js';
import type { RunResult } from '../contracts/work.js';
import { HarnessError } from '../errors.js';
import { runJobData, type RunJobData } from './enqueue-run.js';
import type { RedisRunStore } from './redis-run-store.js';
import { nextProgress, ProgressThrottle, type RunProgress } from './run-progress.js';
import { assertSharedDirectory } from './shared-workspace.js';

/** What `createHarness` of {@link RunWorkerOptions} gets besides the job. */
export interface RunJobContext {
  runId: string;
  /**
   * Where the run works: `<workspaceRoot>/<runId>` for a new run when `workspaceRoot` is set (pass it as the
   * harness's `workspace`), the snapshot's workspace when resuming, otherwise undefined.
   */
  workspace: string | undefined;
  /** True when the job goes on from a snapshot that an earlier attempt saved. */
  resuming: boolean;
}

/** What {@link processRunJob} needs from its worker. @internal */
export interface RunJobDeps {
  createHarness: (job: Job<RunJobData>, context: RunJobContext) => Harness | Promise<Harness>;
  /** The run's Redis store, fenced with this job's lock key and token. */
  storeFor: (job: Job<RunJobData>, token: string) => RedisRunStore;
  workspaceRoot: string | undefined;
  progressIntervalMs: number;
  /** Aborted when the worker closes. */
  closing: AbortSignal;
  /** Puts the job back in the wait list so another worker resumes it (the worker is closing). */
  handBack: (job: Job<RunJobData>, token: string) => Promise<never>;
  onError: (error: unknown) => void;
}

/**
 * Runs (or resumes) the job's run and resolves with its result, the job's return value. Throws when the run's
 * store failed (the job fails; a retry resumes from the last good snapshot) and hands the job back when the
 * worker closed during the run.
 * @internal
 */
export async function processRunJob(
  job: Job<RunJobData>,
  token: string,
  jobSignal: AbortSignal | undefined,
  deps: RunJobDeps,
): Promise<RunResult> {
  const data = runJobData({ ...job.data, runId: job.data?.runId ?? job.id });
  const { runId } = data;
  const store = deps.storeFor(job, token);
  const snapshot = await store.load(runId);
  const workspace = snapshot?.workspace ?? (deps.workspaceRoot ? path.join(deps.workspaceRoot, runId) : undefined);
  if (snapshot) await assertSharedDirectory(snapshot.workspace, runId, "the run's workspace");
  else if (deps.workspaceRoot) await assertSharedDirectory(deps.workspaceRoot, runId, 'the workspace root');

  const harness = await deps.createHarness(job, { runId, workspace, resuming: snapshot !== undefined });
  const stop = new AbortController();
  const onClose = () => stop.abort(new HarnessError('aborted', 'The BullMQ worker is closing.'));
  const onCancel = () => stop.abort(jobSignal?.reason);
  if (deps.closing.aborted) onClose();
  deps.closing.addEventListener('abort', onClose);
  jobSignal?.addEventListener('abort', onCancel);

  let progress: RunProgress = {
    runId,
    stage: 'start',
    iteration: snapshot?.used?.iterations ?? 0,
    toolCalls: 0,
    resumed: false,
  };
  const throttle = new ProgressThrottle((p) => job.updateProgress(p), deps.progressIntervalMs, deps.onError);
  const unsubscribe = harness.onAny((event) => {
    if (event.runId !== runId) return;
    const next = nextProgress(progress, event);
    if (!next) return;
    progress = next;
    throttle.update(next);
  });
  try {
    const result = snapshot
      ? await harness.resume(runId, { store, signal: stop.signal })
      : await harness.run({ task: data.task, attachments: data.attachments, runId, signal: stop.signal, store });
    // An aborted run saves no finished snapshot, so the worker that takes the job over goes on with it.
    if (deps.closing.aborted && result.status === 'aborted') return await deps.handBack(job, token);
    // Its last good snapshot is intact: failing the job lets a retry (`attempts`) resume from there.
    if (result.error?.code === 'store-failed') throw new HarnessError('store-failed', result.error.message);
    return result;
  } finally {
    unsubscribe();
    deps.closing.removeEventListener('abort', onClose);
    jobSignal?.removeEventListener('abort', onCancel);
    await throttle.stop();
    await harness.close().catch(deps.onError);
  }
}
