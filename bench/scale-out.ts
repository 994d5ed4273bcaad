/**
 * The scale-out benchmark of issue 11: runs per minute for 1, 2 and 4 BullMQ run workers (one process each,
 * concurrency 1) on one redis-server, every run on a scripted backend whose model calls each take a fixed
 * simulated latency. The work is waiting, so the figure should grow with the workers.
 *
 * The workers are this file forked with `HH_SCALE_OUT_WORKER` set; `scaleOut()` is what `bench/index.ts` calls.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { createRunWorker, enqueueRun, type RunJobData } from '../src/bullmq/index.js';
import { createHarness } from '../src/harness/harness.js';
import type { RunResult } from '../src/contracts/work.js';
import { planOf, ScriptedBackend, submit } from '../src/testing/index.js';
import { startRedisServer } from '../tests/support/redis-server.js';

/** Options of {@link scaleOut}. */
export interface ScaleOutOptions {
  /** Worker counts to measure. @defaultValue [1, 2, 4] */
  workers?: number[];
  /** Runs per measurement. @defaultValue 16 */
  runs?: number;
  /** Simulated latency of every model call. @defaultValue 200 */
  latencyMs?: number;
}

/** One measured worker count. */
export interface ScaleOutRow {
  workers: number;
  runs: number;
  seconds: number;
  runsPerMinute: number;
}

/** Model calls of one run: plan, three subtasks, synthesis. */
const CALLS_PER_RUN = 5;

interface WorkerConfig {
  port: number;
  queueName: string;
  workspaceRoot: string;
  latencyMs: number;
}

/** Measures runs per minute for each worker count and prints the table; needs `redis-server` on the PATH. */
export async function scaleOut(options: ScaleOutOptions = {}): Promise<ScaleOutRow[]> {
  const { workers = [1, 2, 4], runs = 16, latencyMs = 200 } = options;
  const server = await startRedisServer();
  const root = await mkdtemp(join(tmpdir(), 'hh-scale-out-'));
  const rows: ScaleOutRow[] = [];
  try {
    for (const count of workers) {
      const config = { port: server.port, queueName: `scale-out-${count}`, workspaceRoot: root, latencyMs };
      rows.push(await measure(config, count, runs));
    }
  } finally {
    await server.stop();
    await rm(root, { recursive: true, force: true });
  }
  console.log(
    `\nScale-out on BullMQ: ${runs} runs of ${CALLS_PER_RUN} model calls, ${latencyMs} ms each (no CPU work), ` +
      'one worker process per worker, concurrency 1',
  );
  console.log('| workers | runs | seconds | runs per minute | speed-up |');
  console.log('|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    const speedUp = row.runsPerMinute / (rows[0]?.runsPerMinute ?? row.runsPerMinute);
    console.log(
      `| ${row.workers} | ${row.runs} | ${row.seconds.toFixed(1)} | ${row.runsPerMinute.toFixed(1)} | ${speedUp.toFixed(2)}× |`,
    );
  }
  return rows;
}

async function measure(config: WorkerConfig, workers: number, runs: number): Promise<ScaleOutRow> {
  const children = await Promise.all(Array.from({ length: workers }, () => startWorker(config)));
  const queue = new Queue<RunJobData, RunResult>(config.queueName, {
    connection: { host: '127.0.0.1', port: config.port },
  });
  try {
    const started = performance.now();
    for (let i = 1; i <= runs; i += 1) await enqueueRun(queue, `Write the three parts, #${i}.`);
    for (;;) {
      const { completed = 0, failed = 0 } = await queue.getJobCounts('completed', 'failed');
      if (failed > 0) throw new Error(`scale-out: ${failed} run job(s) failed`);
      if (completed >= runs) break;
      await sleep(50);
    }
    const seconds = (performance.now() - started) / 1000;
    return { workers, runs, seconds, runsPerMinute: (runs / seconds) * 60 };
  } finally {
    await queue.close();
    await Promise.all(children.map(stopWorker));
  }
}

function startWorker(config: WorkerConfig): Promise<ChildProcess> {
  const child = fork(fileURLToPath(import.meta.url), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, HH_SCALE_OUT_WORKER: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`scale-out worker exited (${code}) before it was ready`)));
  });
}

async function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.send('close');
  await exited;
}

/** The forked side: one run worker, ready message to the parent, closes on request. */
async function runWorker(config: WorkerConfig): Promise<void> {
  const backend = () =>
    new ScriptedBackend(async (request) => {
      await sleep(config.latencyMs, undefined, request.signal ? { signal: request.signal } : {});
      if (request.purpose === 'plan') return planOf('part 1', 'part 2', 'part 3');
      return submit(request.purpose === 'synthesize' ? 'final answer' : 'subtask done');
    });
  // A process's first run loads the tokenizer (seconds of CPU): done before the clock starts, as a warm worker has.
  const warmUp = createHarness({ backend: backend(), verification: false });
  await warmUp.run('warm up');
  await warmUp.close();
  const { worker, close } = await createRunWorker({
    connection: { host: '127.0.0.1', port: config.port, maxRetriesPerRequest: null },
    queueName: config.queueName,
    workspaceRoot: config.workspaceRoot,
    concurrency: 1,
    createHarness: (_job, { workspace }) =>
      createHarness({ backend: backend(), verification: false, ...(workspace ? { workspace } : {}) }),
  });
  await worker.waitUntilReady();
  process.send?.('ready');
  process.on('message', () => void close().then(() => process.exit(0)));
}

const workerConfig = process.env.HH_SCALE_OUT_WORKER;
if (workerConfig) await runWorker(JSON.parse(workerConfig) as WorkerConfig);
