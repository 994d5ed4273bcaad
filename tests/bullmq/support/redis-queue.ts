/**
 * The parent side of the multi-process tests: a queue on the test's redis-server and a wait for all its jobs.
 */
import { type Job, Queue } from 'bullmq';
import type { RunJobData } from '../../../src/bullmq/index.js';
import type { RunResult } from '../../../src/contracts/work.js';

export type RunQueueOf = Queue<RunJobData, RunResult>;

export function openQueue(port: number, name: string): RunQueueOf {
  return new Queue<RunJobData, RunResult>(name, {
    connection: { host: '127.0.0.1', port, maxRetriesPerRequest: null },
  });
}

/** Resolves with every job once none is waiting, delayed or active any more. */
export async function allSettled(queue: RunQueueOf, count: number): Promise<Array<Job<RunJobData, RunResult>>> {
  for (;;) {
    const counts = await queue.getJobCounts('completed', 'failed');
    if ((counts.completed ?? 0) + (counts.failed ?? 0) >= count) return queue.getJobs(['completed', 'failed']);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
