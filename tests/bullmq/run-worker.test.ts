import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createRunWorker,
  enqueueRun,
  type RedisCommandClient,
  RedisRunStore,
  type RunJobData,
  type RunProgress,
  type RunWorker,
} from '../../src/bullmq/index.js';
import type { HarnessEvent } from '../../src/events.js';
import { createHarness } from '../../src/harness/harness.js';
import type { RunResult } from '../../src/contracts/work.js';
import { probeRedisServer, type RedisServer, startRedisServer } from '../support/redis-server.js';
import { CALLS_PER_RUN, latencyBackend } from './support/scenario.js';

const probe = probeRedisServer();

describe('enqueueRun input', () => {
  const fakeQueue = () => {
    const added: Array<{ name: string; data: RunJobData; opts: unknown }> = [];
    return {
      added,
      add: async (name: string, data: RunJobData, opts?: unknown) => {
        added.push({ name, data, opts });
        return { id: data.runId } as Job<RunJobData>;
      },
    };
  };

  it('uses a fresh run id as the job id and passes job options through', async () => {
    const queue = fakeQueue();
    const { runId } = await enqueueRun(queue, 'write a.md', { attempts: 3, priority: 2 });
    expect(runId).toMatch(/^run-[0-9a-f-]{36}$/);
    expect(queue.added).toEqual([
      {
        name: 'run',
        data: { task: 'write a.md', attachments: [], runId },
        opts: { attempts: 3, priority: 2, jobId: runId },
      },
    ]);
  });

  it('refuses run ids BullMQ cannot use as job ids, and a jobId of its own', async () => {
    const queue = fakeQueue();
    await expect(enqueueRun(queue, { task: 't', runId: 'a:b' })).rejects.toMatchObject({ code: 'invalid-input' });
    await expect(enqueueRun(queue, { task: 't', runId: '42' })).rejects.toMatchObject({ code: 'invalid-input' });
    await expect(enqueueRun(queue, { task: ' ' })).rejects.toMatchObject({ code: 'invalid-input' });
    for (const runId of ['..', '../outside', 'a/b', '/etc', '.', '']) {
      await expect(enqueueRun(queue, { task: 't', runId })).rejects.toMatchObject({
        code: 'invalid-input',
        message: expect.stringContaining('letters, digits'),
      });
    }
    await expect(enqueueRun(queue, 't', { jobId: 'x' } as never)).rejects.toMatchObject({
      code: 'invalid-input',
      message: /pass runId instead of jobId/,
    });
    expect(queue.added).toEqual([]);
  });
});

describe('createRunWorker options', () => {
  it('names every invalid option', async () => {
    await expect(
      createRunWorker({ connection: {}, queueName: 'a:b', createHarness: 1 as never, concurrency: 0 }),
    ).rejects.toMatchObject({
      code: 'invalid-options',
      message: expect.stringMatching(/createHarness must be a function.*queueName.*concurrency must be an integer ≥ 1/),
    });
  });

  const valid = { connection: {}, queueName: 'runs', createHarness: () => ({}) as never };

  it('names invalid lock and stalled-check settings', async () => {
    await expect(
      createRunWorker({ ...valid, lockDurationMs: 0, stalledIntervalMs: 1.5, maxStalledCount: -1 }),
    ).rejects.toMatchObject({
      code: 'invalid-options',
      message: expect.stringMatching(
        /lockDurationMs must be an integer ≥ 1.*stalledIntervalMs must be an integer ≥ 1.*maxStalledCount must be an integer ≥ 0/,
      ),
    });
  });

  it('refuses a setting given both by name and in workerOptions', async () => {
    await expect(
      createRunWorker({
        ...valid,
        lockDurationMs: 10_000,
        stalledIntervalMs: 2_000,
        maxStalledCount: 2,
        workerOptions: { lockDuration: 20_000, stalledInterval: 2_000, maxStalledCount: 1 },
      }),
    ).rejects.toMatchObject({
      code: 'invalid-options',
      message: expect.stringMatching(
        /lockDurationMs and workerOptions.lockDuration are the same setting.*stalledIntervalMs and workerOptions.stalledInterval.*maxStalledCount and workerOptions.maxStalledCount/,
      ),
    });
  });
});

describe.skipIf(!probe.available)(`run worker on redis-server (${probe.reason})`, () => {
  let server: RedisServer;
  let redis: Redis;
  let root: string;
  const open: Array<{ close(): Promise<unknown> }> = [];
  let queueCount = 0;

  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.port, server.host);
    root = await mkdtemp(path.join(os.tmpdir(), 'hh-bullmq-'));
  });

  afterEach(async () => {
    for (const item of open.splice(0).reverse()) await item.close();
  });

  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  const connection = () => ({ host: server.host, port: server.port, maxRetriesPerRequest: null });

  function newQueue(): Queue<RunJobData, RunResult> {
    queueCount += 1;
    const queue = new Queue<RunJobData, RunResult>(`runs-${queueCount}`, { connection: connection() });
    open.push(queue);
    return queue;
  }

  async function startWorker(
    queue: Queue<RunJobData, RunResult>,
    options: {
      latencyMs?: number;
      events?: HarnessEvent[];
      workspaceRoot?: string;
      storeClient?: RedisCommandClient;
    } = {},
  ): Promise<RunWorker> {
    const runWorker = await createRunWorker({
      connection: connection(),
      ...(options.storeClient ? { storeClient: options.storeClient } : {}),
      queueName: queue.name,
      workspaceRoot: options.workspaceRoot ?? root,
      progressIntervalMs: 0,
      lockDurationMs: 5_000,
      stalledIntervalMs: 1_000,
      createHarness: (_job, { workspace }) => {
        const harness = createHarness({
          backend: latencyBackend(options.latencyMs ?? 0),
          verification: false,
          ...(workspace ? { workspace } : {}),
        });
        harness.onAny((event) => options.events?.push(event));
        return harness;
      },
    });
    open.push(runWorker);
    await runWorker.worker.waitUntilReady();
    return runWorker;
  }

  /** Resolves with the job once it has left the active list for good. */
  async function settled(queue: Queue<RunJobData, RunResult>, runId: string): Promise<Job<RunJobData, RunResult>> {
    for (;;) {
      const job = await queue.getJob(runId);
      const state = await job?.getState();
      // Fetched again: the job read before its state changed lacks its return value or failed reason.
      if (job && (state === 'completed' || state === 'failed')) return (await queue.getJob(runId)) ?? job;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('runs a job end to end: progress on the way, the RunResult as its return value, a finished snapshot', async () => {
    const queue = newQueue();
    const progress: RunProgress[] = [];
    const { runId } = await enqueueRun(queue, { task: 'Write the three parts.', runId: 'run-e2e' });
    const again = await enqueueRun(queue, { task: 'Write the three parts.', runId: 'run-e2e' });
    expect(again.job.id).toBe(runId);

    const { worker } = await startWorker(queue);
    worker.on('progress', (_job, p) => progress.push(p as RunProgress));
    const job = await settled(queue, runId);

    expect(await job.getState()).toBe('completed');
    expect(job.returnvalue).toMatchObject({
      runId,
      status: 'succeeded',
      deliverable: { answer: 'final answer' },
      workspace: path.join(root, runId),
    });
    expect(job.returnvalue.report.resumes.count).toBe(0);
    expect(await queue.getJobCounts('completed', 'waiting', 'active')).toEqual({ completed: 1, waiting: 0, active: 0 });
    expect(progress[0]).toMatchObject({ runId, stage: 'start', iteration: 0 });
    expect(progress.map((p) => p.stage)).toEqual(expect.arrayContaining(['plan', 'execute', 'synthesize', 'finished']));
    // Every model call but the planner's is a ReAct iteration.
    expect(progress.at(-1)).toMatchObject({ stage: 'finished', status: 'succeeded', iteration: CALLS_PER_RUN - 1 });
    expect(progress.find((p) => p.subtask?.index === 3)).toMatchObject({ subtasks: 3, subtask: { title: 'part 3' } });
    expect(await new RedisRunStore(redis).load(runId)).toMatchObject({ status: 'finished' });
  });

  it('gives BullMQ a 12 s lock, a 3 s stalled check and one stall by default, and the named settings when given', async () => {
    const make = async (settings: {
      lockDurationMs?: number;
      stalledIntervalMs?: number;
      maxStalledCount?: number;
    }) => {
      const runWorker = await createRunWorker({
        connection: connection(),
        queueName: newQueue().name,
        createHarness: () => createHarness({ backend: latencyBackend(0), verification: false }),
        ...settings,
      });
      open.push(runWorker);
      return runWorker.worker.opts;
    };
    expect(await make({})).toMatchObject({ lockDuration: 12_000, stalledInterval: 3_000, maxStalledCount: 1 });
    expect(await make({ lockDurationMs: 2_000, stalledIntervalMs: 500, maxStalledCount: 3 })).toMatchObject({
      lockDuration: 2_000,
      // BullMQ renews a lock at half its duration.
      lockRenewTime: 1_000,
      stalledInterval: 500,
      maxStalledCount: 3,
    });
  });

  it('fails a job whose workspace is unreachable, naming the path and the shared-root requirement', async () => {
    const queue = newQueue();
    const missing = path.join(root, 'not-mounted');
    await startWorker(queue, { workspaceRoot: missing });
    const { runId } = await enqueueRun(queue, 'write a.md', { attempts: 1 });
    const job = await settled(queue, runId);
    expect(await job.getState()).toBe('failed');
    expect(job.failedReason).toContain(`the workspace root "${missing}" is unreachable (it does not exist here)`);
    expect(job.failedReason).toContain('Every worker must see the same workspace root at the same path');
  });

  it('fails a resumed job whose snapshot names a workspace this worker cannot see', async () => {
    const queue = newQueue();
    await startWorker(queue);
    const elsewhere = '/mnt/other-machine/run-elsewhere';
    const snapshot = { format: 1, runId: 'run-elsewhere', status: 'running', workspace: elsewhere, used: {} };
    await redis.set('horizon-harness:run:run-elsewhere', JSON.stringify(snapshot));
    await enqueueRun(queue, { task: 'Write the three parts.', runId: 'run-elsewhere' }, { attempts: 1 });
    const job = await settled(queue, 'run-elsewhere');
    expect(await job.getState()).toBe('failed');
    expect(job.failedReason).toContain(`the run's workspace "${elsewhere}" is unreachable (it does not exist here)`);
  });

  it('fails a job added past enqueueRun whose run id would name a directory outside the workspace root', async () => {
    const queue = newQueue();
    const inner = await mkdtemp(path.join(root, 'inner-'));
    await startWorker(queue, { workspaceRoot: inner });
    const data = { task: 'Write the three parts.', attachments: [], runId: '../escaped' };
    await queue.add('run', data, { jobId: 'job-escape', attempts: 1 });
    const job = await settled(queue, 'job-escape');
    expect(await job.getState()).toBe('failed');
    expect(job.failedReason).toContain('Invalid run id "../escaped"');
    expect(await readdir(root)).not.toContain('escaped');
  });

  it('a worker that loses the job lock cannot overwrite the snapshot: its next save fails and its run ends', async () => {
    const queue = newQueue();
    const events: HarnessEvent[] = [];
    const { worker } = await startWorker(queue, { latencyMs: 300, events });
    const workerErrors: Error[] = [];
    worker.on('error', (error) => workerErrors.push(error));
    const { runId } = await enqueueRun(queue, 'Write the three parts.');
    const store = new RedisRunStore(redis);
    // Once subtask 2's model call is in flight, the lock goes to "another worker".
    while (!events.some((e) => e.type === 'llm-request' && e.scope === 'subtask-2')) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await redis.set(`${worker.toKey(runId)}:lock`, 'token-of-another-worker', 'PX', 60_000);
    // Read after the lock moved: Redis runs each fenced save whole, so a save that ran before the move is in this
    // copy (saves go on behind the run) and every one after it is refused.
    const before = await store.load(runId);
    while (!events.some((e) => e.type === 'run-finish')) await new Promise((resolve) => setTimeout(resolve, 20));

    const finish = events.find((e) => e.type === 'run-finish');
    expect(finish).toMatchObject({ result: { status: 'failed', error: { code: 'store-failed' } } });
    expect((await store.load(runId))?.seq).toBe(before?.seq);
    expect(events.filter((e) => e.type === 'llm-request' && e.scope === 'subtask-3')).toEqual([]);
    // BullMQ refuses to finish the job for a worker without the lock, too: it stays with its new owner.
    while (!workerErrors.length) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(workerErrors[0]?.message).toMatch(/Lock mismatch for job/);
    expect(await (await queue.getJob(runId))?.getState()).toBe('active');
  });

  it('a failed snapshot save fails the job; its retry resumes from the last good snapshot', async () => {
    const queue = newQueue();
    // The first write after the run's first snapshot fails (a snapshot or a journal append, as the run's pace has it).
    let writes = 0;
    const flaky: RedisCommandClient = {
      get: (key) => redis.get(key),
      smembers: (key) => redis.smembers(key),
      eval: (script, keys, ...args) => {
        const write = /'(SET|APPEND)', KEYS\[1\]/.test(script) && /:(run|journal):/.test(String(args[0]));
        if (write && ++writes === 2) return Promise.reject(new Error('OOM command not allowed'));
        return redis.eval(script, keys, ...args);
      },
    };
    const events: HarnessEvent[] = [];
    await startWorker(queue, { storeClient: flaky, events });
    const { runId } = await enqueueRun(queue, 'Write the three parts.', { attempts: 2 });
    const job = await settled(queue, runId);

    expect(await job.getState()).toBe('completed');
    expect(job.attemptsMade).toBe(2); // the failed attempt and the one that completed
    expect(job.returnvalue).toMatchObject({ status: 'succeeded', report: { resumes: { count: 1 } } });
    const finishes = events.filter((e) => e.type === 'run-finish') as Array<{ result: RunResult }>;
    expect(finishes.map((e) => e.result.error?.code ?? e.result.status)).toEqual(['store-failed', 'succeeded']);
    expect(events.filter((e) => e.type === 'run-start')).toHaveLength(1);
  });

  it('cancelling the job through BullMQ aborts its run; the job completes with the aborted result', async () => {
    const queue = newQueue();
    const events: HarnessEvent[] = [];
    const { worker } = await startWorker(queue, { latencyMs: 200, events });
    const { runId } = await enqueueRun(queue, 'Write the three parts.');
    while (!events.some((e) => e.type === 'llm-request')) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(worker.cancelJob(runId, 'no longer needed')).toBe(true);
    const job = await settled(queue, runId);
    expect(await job.getState()).toBe('completed');
    expect(job.returnvalue).toMatchObject({ status: 'aborted' });
  });

  it('close() aborts the run and hands the job back; the next worker resumes it from the snapshot', async () => {
    const queue = newQueue();
    const firstEvents: HarnessEvent[] = [];
    const first = await startWorker(queue, { latencyMs: 200, events: firstEvents });
    const { runId } = await enqueueRun(queue, 'Write the three parts.');
    while (!firstEvents.some((e) => e.type === 'llm-request' && e.scope === 'subtask-2')) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await first.close();
    expect(await (await queue.getJob(runId))?.getState()).toBe('waiting');

    const secondEvents: HarnessEvent[] = [];
    await startWorker(queue, { latencyMs: 0, events: secondEvents });
    const job = await settled(queue, runId);
    expect(await job.getState()).toBe('completed');
    expect(job.returnvalue).toMatchObject({ status: 'succeeded', report: { resumes: { count: 1 } } });
    expect(secondEvents.find((e) => e.type === 'run-resume')).toMatchObject({
      stage: 'execute',
      redo: { modelCalls: 1 },
    });
    // Only the call in flight when the worker closed (subtask 2's) is asked again.
    const asked = secondEvents.filter((e) => e.type === 'llm-request').map((e) => (e as { scope?: string }).scope);
    expect(asked).toEqual(['subtask-2', 'subtask-3', 'synthesis']);
  });
});
