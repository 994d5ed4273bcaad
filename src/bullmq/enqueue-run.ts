/**
 * `enqueueRun`: one run = one BullMQ job, whose job id is the run id.
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { Job, JobsOptions } from 'bullmq';
import { assertRunId } from '../durability/run-id.js';
import { HarnessError } from '../errors.js';

/** The data of a run job: what `harness.run()` gets in the worker. */
export interface RunJobData {
  task: string;
  /** Paths every worker can read (on the shared volume): copied into the run's workspace at its start. */
  attachments: string[];
  runId: string;
}

/** What {@link enqueueRun} accepts: the task, or the task with attachments and a run id of your choice. */
export type EnqueueRunInput = string | { task: string; attachments?: readonly string[]; runId?: string };

/**
 * BullMQ job options, passed through (`attempts`, `priority`, `removeOnComplete`, …), plus the job name.
 * `jobId` is always the run id.
 */
export type EnqueueRunOptions = Omit<JobsOptions, 'jobId'> & {
  /** @defaultValue 'run' */
  name?: string;
};

/** What {@link enqueueRun} adds jobs to: a BullMQ `Queue`. */
export interface RunQueue {
  add(name: string, data: RunJobData, opts?: JobsOptions): Promise<Job<RunJobData>>;
}

/** The run id and the job {@link enqueueRun} added (or found: a run id is enqueued once). */
export interface EnqueuedRun {
  runId: string;
  job: Job<RunJobData>;
}

/**
 * Adds a run to a BullMQ queue for the workers of {@link createRunWorker}. The job id is the run id (a fresh
 * `run-<uuid>` unless given), so one run is one job: enqueueing a run id whose job still exists returns that job
 * instead of adding a second one.
 *
 * @example
 * ```ts
 * const queue = new Queue('runs', { connection: { host: '127.0.0.1', port: 6379 } });
 * const { runId } = await enqueueRun(queue, { task: 'Compare three note apps; write compare.md' }, { attempts: 2 });
 * ```
 */
export async function enqueueRun(
  queue: RunQueue,
  input: EnqueueRunInput,
  options: EnqueueRunOptions = {},
): Promise<EnqueuedRun> {
  const data = runJobData(input);
  const { name = 'run', ...jobOptions } = options;
  if ('jobId' in jobOptions) {
    throw new HarnessError('invalid-input', 'enqueueRun sets the job id to the run id: pass runId instead of jobId.');
  }
  const job = await queue.add(name, data, { ...jobOptions, jobId: data.runId });
  return { runId: data.runId, job };
}

/** Validates the input and fills in the run id. @internal */
export function runJobData(input: EnqueueRunInput): RunJobData {
  const object = typeof input === 'string' ? { task: input } : input;
  if (typeof object?.task !== 'string' || !object.task.trim()) {
    throw new HarnessError(
      'invalid-input',
      'enqueueRun needs a non-empty task: a string or { task, attachments?, runId? }.',
    );
  }
  const attachments = object.attachments ?? [];
  if (!Array.isArray(attachments) || attachments.some((a) => typeof a !== 'string' || !a)) {
    throw new HarnessError(
      'invalid-input',
      'attachments must be an array of non-empty file paths every worker can read.',
    );
  }
  const runId = object.runId ?? `run-${randomUUID()}`;
  // The worker names the run's workspace `<workspaceRoot>/<runId>`: the run-id rule keeps it there.
  assertRunId(runId, 'enqueueRun (or found in a job of the queue)');
  // BullMQ refuses integer job ids; say so before it does (the rule already excludes its ":" separator).
  if (`${Number.parseInt(runId, 10)}` === runId) {
    throw new HarnessError(
      'invalid-input',
      `runId "${runId}" cannot be a BullMQ job id: BullMQ refuses integer job ids; use one with a letter in it.`,
    );
  }
  return { task: object.task, attachments: [...attachments], runId };
}
