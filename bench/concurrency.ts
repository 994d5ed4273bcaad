/**
 * Concurrent runs in one process: k runs of horizon-harness started at once on a scripted backend whose every
 * call takes a simulated 200 ms (no CPU work), each run one 10-step subtask whose tool returns a deterministic
 * 20 000-character text (so the memory bounds and saves every observation, as in real runs). Measured in a child
 * process of its own (see `peer.ts`): wall time, peak RSS above the RSS before the runs, the event loop's delay
 * (`perf_hooks.monitorEventLoopDelay`) while they run, the CPU time the process spent per run step, and the
 * process's file descriptors (`/proc/self/fd`) before, at the peak and after. With the store, it then measures the
 * durable-write floor of the same number of runs (see {@link durableFloor}) in the same process.
 * @module
 */
import { mkdtemp, open, readdir, readlink, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LlmBackend } from 'horizon-harness';

/** What k concurrent runs measured, in one process. */
export interface ConcurrencyMeasurement {
  runs: number;
  wallMs: number;
  /** Peak RSS while the runs were in flight, minus the RSS before they started (after a warm-up run). */
  rssGrowthMb: number;
  eventLoopDelayP99Ms: number;
  eventLoopDelayMaxMs: number;
  succeeded: number;
  /** Open descriptors of the process before the runs (after the warm-up), at their peak during them, and after. */
  fds: { before: number; peak: number; after: number };
  /** Of those, descriptors of files and directories (not sockets, pipes, event fds or devices), at their peak. */
  openFilesPeak: number;
  /**
   * CPU time (user + system, every thread of the process) spent while the runs were in flight, per run step (model
   * call): what the harness costs beyond waiting, a figure the machine's other load inflates far less than wall time.
   */
  cpuMsPerStep: number;
  /** With the store: the wall time of {@link durableFloor} for as many runs, measured right after them. */
  durableFloorMs?: number;
}

/** The simulated model latency of every call. */
export const LATENCY_MS = 200;
/** Model calls in the subtask: nine tool calls, then `submit_answer`. */
export const SUBTASK_STEPS = 10;
const OUTPUT_CHARS = 20_000;
const RSS_SAMPLE_MS = 20;
// Counting descriptors is a readdir through the thread pool; naming each one, a readlink apiece: done less often.
const FD_COUNT_MS = 100;
const FD_CLASSIFY_EVERY = 5;
const FD_READLINK_BATCH = 64;

/** Starts `runs` runs at once (after one warm-up run) and measures them; `store: false` turns snapshots off. */
export async function measureConcurrency(runs: number, store = true): Promise<ConcurrencyMeasurement> {
  const { createHarness, defineTool } = await import('horizon-harness');
  const { submit, toolCall } = await import('horizon-harness/testing');
  const { z } = await import('zod');
  const output = 'measurement '.repeat(Math.ceil(OUTPUT_CHARS / 12)).slice(0, OUTPUT_CHARS);
  const fetchPage = defineTool({
    name: 'fetch_page',
    description: 'Fetches one measurement page.',
    input: z.object({ page: z.number() }),
    // Fetching a page changes nothing: declared so, as a host would, it runs without waiting for a durable save.
    readOnly: true,
    execute: ({ page }) => `page ${page}: ${output}`,
  });
  // A plain backend rather than ScriptedBackend, which records every request and would count as run memory.
  const backend: LlmBackend = {
    provider: 'bench',
    modelId: 'simulated-latency',
    contextWindow: 128_000,
    async generate(request) {
      await sleep(LATENCY_MS, undefined, request.signal ? { signal: request.signal } : {});
      if (request.purpose !== 'execute') return submit('final answer');
      const done = request.messages.filter((message) => message.role === 'tool').length;
      return done < SUBTASK_STEPS - 1 ? toolCall('fetch_page', { page: done }) : submit('subtask done');
    },
  };
  // One harness serves every run, as in a server; the warm-up loads the tokenizer and the lazy modules.
  const harness = createHarness({
    backend,
    tools: [fetchPage],
    decomposition: false,
    verification: false,
    ...(store ? {} : { store: false as const }),
  });
  await harness.run('warm up');

  // `memoryUsage.rss()` alone: the full `memoryUsage()` walks the heap spaces, work of the benchmark's, not the runs'.
  const baseline = process.memoryUsage.rss();
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, RSS_SAMPLE_MS);
  const fds = new FdSampler();
  await fds.start();
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const results = await Promise.all(
    Array.from({ length: runs }, (_, i) => harness.run(`Fetch the pages of batch ${i + 1}, then answer.`)),
  );
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  delay.disable();
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage.rss());
  // Every run has returned: whatever a run opened should be closed by now, before the harness itself closes.
  const fdFigures = await fds.stop();
  await harness.close();
  const durableFloorMs = store ? await durableFloor(runs) : undefined;
  return {
    runs,
    wallMs,
    rssGrowthMb: (peak - baseline) / 1024 / 1024,
    eventLoopDelayP99Ms: delay.percentile(99) / 1e6,
    eventLoopDelayMaxMs: delay.max / 1e6,
    succeeded: results.filter((result) => result.status === 'succeeded').length,
    fds: fdFigures.fds,
    openFilesPeak: fdFigures.openFilesPeak,
    cpuMsPerStep: (cpu.user + cpu.system) / 1000 / (runs * SUBTASK_STEPS),
    ...(durableFloorMs === undefined ? {} : { durableFloorMs }),
  };
}

/** Whole snapshots a run of this workload writes and waits for: at its start, where its loop ended, at its end. */
const SNAPSHOTS_PER_RUN = 3;
const SNAPSHOT_BYTES = 3_000;

/**
 * The durable-write floor of `runs` concurrent runs: each of `runs` tasks, all started at once, replaces a file
 * atomically and durably {@link SNAPSHOTS_PER_RUN} times in its own directory (write a temp file, fsync it, rename it
 * over the file, fsync the directory), as the file store does for a run's whole snapshots, with nothing else going on.
 * No store can make those runs wait less on this disk through this thread pool; the runs' journal appends come on top.
 */
export async function durableFloor(runs: number): Promise<number> {
  const root = await mkdtemp(path.join(tmpdir(), 'hh-durable-floor-'));
  const bytes = Buffer.alloc(SNAPSHOT_BYTES, 'x');
  const dirs = await Promise.all(Array.from({ length: runs }, (_, i) => mkdtemp(path.join(root, `run-${i}-`))));
  const started = performance.now();
  await Promise.all(
    dirs.map(async (dir) => {
      for (let i = 0; i < SNAPSHOTS_PER_RUN; i++) {
        const temp = await open(path.join(dir, 'run.json.tmp'), 'w');
        await temp.write(bytes);
        await temp.sync();
        await temp.close();
        await rename(path.join(dir, 'run.json.tmp'), path.join(dir, 'run.json'));
        const directory = await open(dir, 'r');
        await directory.sync();
        await directory.close();
      }
    }),
  );
  const elapsed = performance.now() - started;
  await rm(root, { recursive: true, force: true });
  return elapsed;
}

/** Samples the process's open descriptors (Linux `/proc/self/fd`; zeros where it is missing). */
class FdSampler {
  private before = 0;
  private peak = 0;
  private openFilesPeak = 0;
  private samples = 0;
  private timer: NodeJS.Timeout | undefined;
  private pending: Promise<void> = Promise.resolve();

  async start(): Promise<void> {
    this.before = (await fdTargets(false)).count;
    this.peak = this.before;
    this.timer = setInterval(() => {
      // One sample at a time: a slow one under load is not overtaken by the next.
      this.pending = this.pending.then(() => this.sample());
    }, FD_COUNT_MS);
  }

  async stop(): Promise<Pick<ConcurrencyMeasurement, 'fds' | 'openFilesPeak'>> {
    clearInterval(this.timer);
    await this.pending;
    const after = await fdTargets(true);
    return {
      fds: { before: this.before, peak: this.peak, after: after.count },
      openFilesPeak: Math.max(this.openFilesPeak, after.files),
    };
  }

  private async sample(): Promise<void> {
    this.samples += 1;
    const { count, files } = await fdTargets(this.samples % FD_CLASSIFY_EVERY === 0);
    this.peak = Math.max(this.peak, count);
    this.openFilesPeak = Math.max(this.openFilesPeak, files);
  }
}

/** How many descriptors the process holds and, when `classify`, how many of them name files or directories. */
async function fdTargets(classify: boolean): Promise<{ count: number; files: number }> {
  let names: string[];
  try {
    names = await readdir('/proc/self/fd');
  } catch {
    return { count: 0, files: 0 };
  }
  if (!classify) return { count: names.length, files: 0 };
  // A batch of readlinks at a time: thousands at once would queue ahead of the runs' own file work in the thread pool.
  const targets: string[] = [];
  for (let at = 0; at < names.length; at += FD_READLINK_BATCH) {
    const batch = names.slice(at, at + FD_READLINK_BATCH);
    targets.push(...(await Promise.all(batch.map((name) => readlink(`/proc/self/fd/${name}`).catch(() => '')))));
  }
  // Sockets, pipes and event fds read `socket:[…]`, `pipe:[…]`, `anon_inode:…`; devices live under /dev.
  const files = targets.filter((target) => target.startsWith('/') && !target.startsWith('/dev/')).length;
  return { count: names.length, files };
}
