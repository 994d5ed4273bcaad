/**
 * `horizon-harness/bullmq`: runs as BullMQ jobs across worker processes, checkpointed to Redis, resumed by the
 * worker that takes over a stalled job. Needs the optional peer dependency `bullmq` (and `ioredis`, its default
 * driver). See docs/durability.md.
 * @packageDocumentation
 */
export {
  enqueueRun,
  type EnqueuedRun,
  type EnqueueRunInput,
  type EnqueueRunOptions,
  type RunJobData,
  type RunQueue,
} from './enqueue-run.js';
export type { RunJobContext } from './process-run-job.js';
export {
  RedisRunStore,
  type RedisCommandClient,
  type RedisRunStoreOptions,
  type WriteFence,
} from './redis-run-store.js';
export type { RunProgress } from './run-progress.js';
export { createRunWorker, type RunWorker, type RunWorkerOptions } from './run-worker.js';
