/**
 * `createRunWorker`: a BullMQ worker whose jobs are harness runs, checkpointed to Redis and resumed by whichever
 * worker takes a job over.
 * @module
 */
import type { ConnectionOptions, Job, Worker, WorkerOptions } from 'bullmq';
import { HarnessError } from '../errors.js';
import type { Harness } from '../harness/harness.js';
import type { RunResult } from '../contracts/work.js';
import type { RunJobData } from './enqueue-run.js';
import { loadBullMQ, loadIORedis } from './peer.js';
import { processRunJob, type RunJobContext, type RunJobDeps } from './process-run-job.js';
import { type RedisCommandClient, RedisRunStore } from './redis-run-store.js';

/** Options of {@link createRunWorker}. */
export interface RunWorkerOptions {
  /** How BullMQ connects to Redis (options or an ioredis instance); the snapshot store uses the same server. */
  connection: ConnectionOptions;
  queueName: string;
  /**
   * Makes the harness of one job; called once per job, and the worker closes it when the job ends. Pass
   * `context.workspace` as its `workspace` option so that the run works under the shared workspace root.
   */
  createHarness: (job: Job<RunJobData>, context: RunJobContext) => Harness | Promise<Harness>;
  /** Jobs (runs) this worker works on at once. @defaultValue 1 */
  concurrency?: number;
  /**
   * The workspace root every worker shares (the same path on each: NFS, a mounted volume). A new run works in
   * `<workspaceRoot>/<runId>`; at job start the worker checks that the root (or, when resuming, the run's workspace)
   * is a directory it can reach, and fails the job with an error naming the path otherwise.
   */
  workspaceRoot?: string;
  /** Start of the snapshot keys (`<storePrefix>:run:<runId>`). @defaultValue 'horizon-harness' */
  storePrefix?: string;
  /**
   * The client the snapshot store writes with. It must reach the Redis server (and database) BullMQ uses, since
   * each save checks the job's lock there. @defaultValue a client of its own made from `connection` (closed by
   * `close()`)
   */
  storeClient?: RedisCommandClient;
  /** Least time between two progress updates of a job. @defaultValue 1000 */
  progressIntervalMs?: number;
  /**
   * How long a job's lock lasts (BullMQ `lockDuration`). A timer renews the locks of the worker's jobs every
   * `lockDurationMs / 4` to `lockDurationMs / 2`, so a live worker loses a job only when its event loop is blocked
   * for more than `lockDurationMs / 2` (6 s with the default) at the least; a dead worker's lock expires at most
   * `lockDurationMs` after its death.
   * @defaultValue 12000
   */
  lockDurationMs?: number;
  /**
   * How often the stalled-job check runs (BullMQ `stalledInterval`): it moves the jobs whose lock has expired back
   * to the wait list, where another worker resumes them. A dead worker's run is therefore taken over at most
   * `lockDurationMs + stalledIntervalMs` after its death (15 s with the defaults) while `stalledIntervalMs` is below
   * `lockDurationMs`, and at most `lockDurationMs + 2 × stalledIntervalMs` otherwise.
   * @defaultValue 3000
   */
  stalledIntervalMs?: number;
  /**
   * Stalls a job may go through before BullMQ fails it with "job stalled more than allowable limit" (BullMQ
   * `maxStalledCount`): with 1, a run survives one dead worker, and the second death during the same job fails it.
   * @defaultValue 1
   */
  maxStalledCount?: number;
  /**
   * Further BullMQ worker options, passed through: `prefix`, `removeOnComplete`, `limiter`, … (`connection`,
   * `concurrency` and `autorun` are set from the options above; `lockDuration`, `stalledInterval` and
   * `maxStalledCount` are accepted here as well, but not together with `lockDurationMs`, `stalledIntervalMs` or
   * `maxStalledCount` above).
   */
  workerOptions?: Omit<WorkerOptions, 'connection' | 'concurrency' | 'autorun'>;
  /** Called with errors that do not fail a job (a progress update that could not be sent). @defaultValue the worker's `error` event */
  onError?: (error: unknown) => void;
}

/** A running run worker. */
export interface RunWorker {
  /** The BullMQ worker: listen to its events (`completed`, `failed`, `stalled`, `error`, …). */
  readonly worker: Worker<RunJobData, RunResult>;
  /**
   * Stops taking jobs, aborts the runs in flight and hands their jobs back to the queue, where another worker
   * resumes them from their last snapshot; then closes the worker and the store client it made.
   */
  close(): Promise<void>;
}

/**
 * Starts a BullMQ worker that runs the jobs of {@link enqueueRun}. Each job is one run: the worker resumes it when
 * Redis holds a snapshot of it (an earlier attempt died, stalled or was handed back) and runs it otherwise. Every
 * snapshot save is fenced with the job's lock, so a worker that lost the job cannot overwrite the newer snapshot.
 * The job's progress is a {@link RunProgress}; its return value is the {@link RunResult}.
 *
 * @example
 * ```ts
 * const { worker, close } = await createRunWorker({
 *   connection: { host: '127.0.0.1', port: 6379 },
 *   queueName: 'runs',
 *   workspaceRoot: '/mnt/runs',
 *   createHarness: (job, { workspace }) => createHarness({ backend, tools: builtinTools(), workspace }),
 *   concurrency: 4,
 * });
 * process.once('SIGTERM', () => void close());
 * ```
 */
export async function createRunWorker(options: RunWorkerOptions): Promise<RunWorker> {
  validate(options);
  const { Worker: WorkerClass, WaitingError } = await loadBullMQ();
  const owned = options.storeClient ? undefined : await storeClientFor(options.connection);
  const client = options.storeClient ?? (owned as RedisCommandClient);
  const closing = new AbortController();
  let worker: Worker<RunJobData, RunResult>;

  const deps: RunJobDeps = {
    createHarness: options.createHarness,
    storeFor: (job, token) =>
      new RedisRunStore(client, {
        ...(options.storePrefix ? { prefix: options.storePrefix } : {}),
        fence: { key: `${worker.toKey(job.id ?? '')}:lock`, token },
      }),
    workspaceRoot: options.workspaceRoot,
    progressIntervalMs: options.progressIntervalMs ?? 1_000,
    closing: closing.signal,
    handBack: async (job, token) => {
      await job.moveToWait(token);
      // BullMQ leaves a job that a processor moved and signalled with WaitingError where the processor put it.
      throw new WaitingError();
    },
    onError: options.onError ?? ((error) => worker.emit('error', error as Error)),
  };
  worker = new WorkerClass<RunJobData, RunResult>(
    options.queueName,
    (job: Job<RunJobData>, token: string | undefined, signal: AbortSignal | undefined) =>
      processRunJob(job, requireToken(token), signal, deps),
    {
      ...options.workerOptions,
      ...stalledJobSettings(options),
      connection: options.connection,
      concurrency: options.concurrency ?? 1,
    },
  );
  let closed: Promise<void> | undefined;
  const close = () =>
    (closed ??= (async () => {
      closing.abort();
      try {
        await worker.close();
      } finally {
        await owned?.quit().catch(() => owned.disconnect());
      }
    })());
  return { worker, close };
}

// A dead worker's run resumes within lockDuration + stalledInterval = 15 s, and a live worker keeps its jobs
// through an event-loop stall of up to 6 s (half the lock): see docs/durability.md, "Stalled jobs and resume".
const DEFAULT_LOCK_DURATION_MS = 12_000;
const DEFAULT_STALLED_INTERVAL_MS = 3_000;
const DEFAULT_MAX_STALLED_COUNT = 1;

/** BullMQ's `lockDuration`, `stalledInterval` and `maxStalledCount` from the named options, else `workerOptions`. */
function stalledJobSettings(
  options: RunWorkerOptions,
): Pick<WorkerOptions, 'lockDuration' | 'stalledInterval' | 'maxStalledCount'> {
  const passed = options.workerOptions ?? {};
  return {
    lockDuration: options.lockDurationMs ?? passed.lockDuration ?? DEFAULT_LOCK_DURATION_MS,
    stalledInterval: options.stalledIntervalMs ?? passed.stalledInterval ?? DEFAULT_STALLED_INTERVAL_MS,
    maxStalledCount: options.maxStalledCount ?? passed.maxStalledCount ?? DEFAULT_MAX_STALLED_COUNT,
  };
}

function validate(options: RunWorkerOptions): void {
  const problems: string[] = [];
  if (typeof options?.createHarness !== 'function')
    problems.push('createHarness must be a function (job, context) => Harness');
  if (typeof options?.queueName !== 'string' || !options.queueName || options.queueName.includes(':')) {
    problems.push('queueName must be a non-empty string without ":"');
  }
  if (options?.connection === undefined || options.connection === null) problems.push('connection is required');
  const { concurrency, progressIntervalMs } = options ?? {};
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency >= 1)) {
    problems.push('concurrency must be an integer ≥ 1');
  }
  if (progressIntervalMs !== undefined && !(Number.isFinite(progressIntervalMs) && progressIntervalMs >= 0)) {
    problems.push('progressIntervalMs must be a number ≥ 0');
  }
  if (options?.workspaceRoot !== undefined && (typeof options.workspaceRoot !== 'string' || !options.workspaceRoot)) {
    problems.push('workspaceRoot must be a non-empty directory path');
  }
  problems.push(...stalledJobProblems(options ?? ({} as RunWorkerOptions)));
  if (problems.length) {
    throw new HarnessError('invalid-options', `Invalid createRunWorker options: ${problems.join('; ')}.`);
  }
}

/** What is wrong with the stalled-job settings: bad values, one setting given twice, a lock the check cannot see expire. */
function stalledJobProblems(options: RunWorkerOptions): string[] {
  const problems: string[] = [];
  const passed = options.workerOptions ?? {};
  const pairs = [
    ['lockDurationMs', 'lockDuration'],
    ['stalledIntervalMs', 'stalledInterval'],
    ['maxStalledCount', 'maxStalledCount'],
  ] as const;
  for (const [named, bullmq] of pairs) {
    if (options[named] !== undefined && passed[bullmq] !== undefined) {
      problems.push(`${named} and workerOptions.${bullmq} are the same setting: pass only ${named}`);
    }
  }
  const { lockDuration, stalledInterval, maxStalledCount } = stalledJobSettings(options);
  if (!(Number.isInteger(lockDuration) && (lockDuration as number) >= 1)) {
    problems.push('lockDurationMs must be an integer ≥ 1 (milliseconds)');
  }
  if (!(Number.isInteger(stalledInterval) && (stalledInterval as number) >= 1)) {
    problems.push('stalledIntervalMs must be an integer ≥ 1 (milliseconds)');
  }
  if (!(Number.isInteger(maxStalledCount) && (maxStalledCount as number) >= 0)) {
    problems.push('maxStalledCount must be an integer ≥ 0');
  }
  return problems;
}

/** A job handed to a processor function always has a lock token; without one no save could be fenced. */
function requireToken(token: string | undefined): string {
  if (!token)
    throw new HarnessError('internal', 'BullMQ gave the run job no lock token; its snapshots cannot be fenced.');
  return token;
}

type OwnedClient = RedisCommandClient & { quit(): Promise<unknown>; disconnect(): void };

/** A store client of the worker's own on the server BullMQ connects to: a duplicate of a given ioredis client. */
async function storeClientFor(connection: ConnectionOptions): Promise<OwnedClient> {
  const candidate = connection as Partial<{ duplicate: () => unknown; eval: unknown }>;
  if (typeof candidate.duplicate === 'function' && typeof candidate.eval === 'function') {
    return candidate.duplicate() as OwnedClient;
  }
  if (typeof candidate.duplicate === 'function') {
    throw new HarnessError(
      'invalid-options',
      'createRunWorker cannot make a snapshot store client from this connection (not ioredis): pass storeClient, an ' +
        'ioredis-compatible client of the same Redis server.',
    );
  }
  const { Redis } = await loadIORedis();
  const { url, ...rest } = connection as { url?: string } & Record<string, unknown>;
  return (url ? new Redis(url, rest) : new Redis(rest)) as unknown as OwnedClient;
}
