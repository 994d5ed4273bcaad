/**
 * Workers in child processes, killed with SIGKILL mid-run: BullMQ's stalled-job check hands the job to another
 * worker, which resumes the run from its Redis snapshot instead of starting over.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { enqueueRun } from '../../src/bullmq/index.js';
import { probeRedisServer, type RedisServer, startRedisServer } from '../support/redis-server.js';
import { allSettled, openQueue, type RunQueueOf } from './support/redis-queue.js';
import { CALLS_PER_RUN } from './support/scenario.js';
import { WorkerFleet } from './support/worker-fleet.js';
import type { WorkerProcessConfig } from './support/worker-process.js';

const probe = probeRedisServer();

describe.skipIf(!probe.available)(`run workers killed mid-run (${probe.reason})`, () => {
  let server: RedisServer;
  let root: string;
  let fleet: WorkerFleet;
  let queue: RunQueueOf;

  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });
  afterEach(async () => {
    await fleet?.stopAll();
    await queue?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  async function setUp(queueName: string): Promise<(name: string, concurrency: number) => WorkerProcessConfig> {
    root = await mkdtemp(path.join(os.tmpdir(), 'hh-bullmq-crash-'));
    fleet = new WorkerFleet();
    queue = openQueue(server.port, queueName);
    // Short locks so the stalled check hands a dead worker's job over within seconds.
    return (name, concurrency) => ({
      name,
      port: server.port,
      queueName,
      workspaceRoot: root,
      latencyMs: 250,
      concurrency,
      lockDurationMs: 4_000,
      stalledIntervalMs: 1_000,
      maxStalledCount: 2,
    });
  }

  it('a worker SIGKILLed as its run starts: the stalled check of another takes the job over, which finishes the run from its snapshot', async () => {
    const config = await setUp('crash-at-start');
    // The settings as createRunWorker takes them (a short lock), and its default maxStalledCount (1).
    const short = (name: string) => ({ ...config(name, 1), maxStalledCount: undefined });
    await Promise.all([fleet.prepare(short('doomed')), fleet.prepare(short('heir'))]);
    await fleet.release('doomed');
    const { runId } = await enqueueRun(queue, 'Write the three parts.');
    // run-start comes once the run's first snapshot is stored.
    await fleet.waitFor((m) => m.kind === 'event' && m.type === 'run-start' && m.runId === runId);
    await fleet.kill('doomed');
    await fleet.release('heir');

    const [job] = await allSettled(queue, 1);
    expect(await job?.getState()).toBe('completed');
    expect(job?.returnvalue).toMatchObject({ status: 'succeeded', deliverable: { answer: 'final answer' } });
    expect(job?.returnvalue.report.resumes.count).toBe(1);
    // The heir's own stalled check moved the dead worker's job back to the wait list; the heir then resumed it.
    expect(fleet.messages).toContainEqual({ kind: 'stalled', worker: 'heir', jobId: runId });
    const heir = fleet.eventsOf(runId, 'heir').map((e) => e.type);
    expect(heir).not.toContain('run-start');
    expect(heir[0]).toBe('run-resume');
    expect(heir.at(-1)).toBe('run-finish');
    expect(fleet.messages.filter((m) => m.kind === 'completed')).toEqual([
      { kind: 'completed', worker: 'heir', jobId: runId },
    ]);
  }, 60_000);

  it('a SIGKILLed worker: another one resumes the run from its snapshot, and the job completes once', async () => {
    const config = await setUp('crash-one');
    await Promise.all([fleet.prepare(config('doomed', 1)), fleet.prepare(config('heir', 1))]);
    await fleet.release('doomed');
    const { runId } = await enqueueRun(queue, 'Write the three parts.');
    // Killed while subtask 2's model call is in flight: plan and subtask 1 are done and saved.
    await fleet.waitFor((m) => m.kind === 'event' && m.type === 'llm-request' && m.scope === 'subtask-2');
    await fleet.kill('doomed');
    await fleet.release('heir');

    const [job] = await allSettled(queue, 1);
    expect(await job?.getState()).toBe('completed');
    expect(job?.returnvalue).toMatchObject({ status: 'succeeded', deliverable: { answer: 'final answer' } });
    expect(job?.returnvalue.report.resumes).toMatchObject({ count: 1, redoneModelCalls: 1 });

    const heir = fleet.eventsOf(runId, 'heir');
    expect(heir.map((e) => e.type)).not.toContain('run-start');
    expect(heir.find((e) => e.type === 'run-resume')).toBeDefined();
    const answeredBefore = fleet
      .eventsOf(runId, 'doomed')
      .filter((e) => e.type === 'llm-response')
      .map((e) => e.scope ?? e.purpose);
    const askedAfter = heir.filter((e) => e.type === 'llm-request').map((e) => e.scope ?? e.purpose);
    expect(answeredBefore).toEqual(['plan', 'subtask-1']);
    expect(askedAfter).toEqual(['subtask-2', 'subtask-3', 'synthesis']);
    expect(answeredBefore.length + askedAfter.length).toBe(CALLS_PER_RUN);
    expect(fleet.messages.filter((m) => m.kind === 'completed')).toEqual([
      { kind: 'completed', worker: 'heir', jobId: runId },
    ]);
  }, 60_000);

  it('scale-out: 3 workers, 20 runs, one worker killed mid-run; every run finishes exactly once', async () => {
    const config = await setUp('crash-fleet');
    await Promise.all(['w1', 'w2', 'w3'].map((name) => fleet.start(config(name, 3))));
    const runIds: string[] = [];
    for (let i = 1; i <= 20; i += 1) runIds.push((await enqueueRun(queue, `Write the three parts, #${i}.`)).runId);

    await fleet.waitFor((m) => m.kind === 'event' && m.worker === 'w1' && m.scope === 'subtask-2');
    await fleet.kill('w1');
    const jobs = await allSettled(queue, runIds.length);

    expect(jobs.map((job) => job.returnvalue?.status).sort()).toEqual(runIds.map(() => 'succeeded'));
    const completions = fleet.messages.filter((m) => m.kind === 'completed').map((m) => (m as { jobId: string }).jobId);
    expect(completions.sort()).toEqual([...runIds].sort());
    for (const runId of runIds) {
      expect(
        fleet.eventsOf(runId).filter((e) => e.type === 'run-finish'),
        runId,
      ).toHaveLength(1);
    }

    // The runs w1 had started and not finished: none started again; each went on elsewhere from its snapshot.
    const orphaned = runIds.filter((id) => {
      const types = fleet.eventsOf(id, 'w1').map((e) => e.type);
      return types.includes('run-start') && !types.includes('run-finish');
    });
    expect(orphaned.length).toBeGreaterThan(0);
    for (const runId of orphaned) {
      const events = fleet.eventsOf(runId);
      expect(
        events.filter((e) => e.type === 'run-start'),
        runId,
      ).toHaveLength(1);
      expect(
        events.filter((e) => e.type === 'run-resume' && e.worker !== 'w1'),
        runId,
      ).toHaveLength(1);
      const job = jobs.find((j) => j.id === runId);
      expect(job?.returnvalue.report.resumes.count, runId).toBe(1);
      // At most the call in flight is asked again.
      expect(events.filter((e) => e.type === 'llm-request').length, runId).toBeLessThanOrEqual(CALLS_PER_RUN + 1);
    }
    for (const job of jobs.filter((j) => !orphaned.includes(String(j.id)))) {
      expect(job.returnvalue.report.resumes.count, String(job.id)).toBe(0);
    }
  }, 120_000);
});
