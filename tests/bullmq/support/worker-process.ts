/**
 * A run worker in its own process, for the tests that SIGKILL one: started with `fork()` (and `--import tsx`), it
 * warms up, says `warm`, starts its worker on the parent's `start`, and reports over IPC when it is ready, every
 * run event that matters to the tests, and every job it completed.
 */
import { createRunWorker } from '../../../src/bullmq/index.js';
import { createHarness } from '../../../src/harness/harness.js';
import { latencyBackend } from './scenario.js';

/** What the parent passes in `HH_WORKER` (JSON). */
export interface WorkerProcessConfig {
  name: string;
  port: number;
  queueName: string;
  workspaceRoot: string;
  latencyMs: number;
  concurrency: number;
  /** createRunWorker's lock and stalled-check settings; left out, its defaults. */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  maxStalledCount?: number;
}

/** What the worker reports to its parent. */
export type WorkerMessage =
  | { kind: 'warm'; worker: string }
  | { kind: 'ready'; worker: string }
  | { kind: 'event'; worker: string; runId: string; type: string; purpose?: string; scope?: string }
  | { kind: 'completed'; worker: string; jobId: string }
  | { kind: 'stalled'; worker: string; jobId: string }
  | { kind: 'failed'; worker: string; jobId: string; reason: string };

const config = JSON.parse(process.env.HH_WORKER ?? '{}') as WorkerProcessConfig;
const report = (message: WorkerMessage) => process.send?.(message);
const reported = new Set(['run-start', 'run-resume', 'llm-request', 'llm-response', 'run-finish']);

// The first run of a process loads the tokenizer, blocking the event loop for seconds: longer than the short test
// locks, which would make the stalled check take live jobs away. One run before taking jobs keeps that out.
const warmUp = createHarness({ backend: latencyBackend(0), verification: false });
await warmUp.run('warm up');
await warmUp.close();
// Starting a process takes seconds (loading the library); the parent starts spares early and releases them later.
report({ kind: 'warm', worker: config.name });
await new Promise<void>((resolve) =>
  process.once('message', (message) => (message === 'start' ? resolve() : process.exit(0))),
);

const { worker, close } = await createRunWorker({
  connection: { host: '127.0.0.1', port: config.port, maxRetriesPerRequest: null },
  queueName: config.queueName,
  concurrency: config.concurrency,
  workspaceRoot: config.workspaceRoot,
  progressIntervalMs: 0,
  ...(config.lockDurationMs === undefined ? {} : { lockDurationMs: config.lockDurationMs }),
  ...(config.stalledIntervalMs === undefined ? {} : { stalledIntervalMs: config.stalledIntervalMs }),
  ...(config.maxStalledCount === undefined ? {} : { maxStalledCount: config.maxStalledCount }),
  workerOptions: { name: config.name },
  createHarness: (_job, { workspace }) => {
    const harness = createHarness({
      backend: latencyBackend(config.latencyMs),
      verification: false,
      ...(workspace ? { workspace } : {}),
    });
    harness.onAny((event) => {
      if (!reported.has(event.type)) return;
      const scope = 'purpose' in event ? { purpose: event.purpose, scope: event.scope } : {};
      report({ kind: 'event', worker: config.name, runId: event.runId, type: event.type, ...scope });
    });
    return harness;
  },
});
// The stalled-job check of this worker moved a dead worker's job back to the wait list.
worker.on('stalled', (jobId) => report({ kind: 'stalled', worker: config.name, jobId }));
worker.on('completed', (job) => report({ kind: 'completed', worker: config.name, jobId: String(job.id) }));
worker.on('failed', (job, error) =>
  report({ kind: 'failed', worker: config.name, jobId: String(job?.id), reason: error.message }),
);
worker.on('error', () => undefined);
await worker.waitUntilReady();
report({ kind: 'ready', worker: config.name });
process.on('message', (message) => {
  if (message === 'close') void close().then(() => process.exit(0));
});
