/**
 * The durability benchmark of issues 11 and 21: the crash test's scenario (3 subtasks, synthesis, a failed
 * verification and a repair, on a scripted backend with simulated latency) killed with SIGKILL at 30 seeded points
 * of the run in child processes (two of them before the first model call) and resumed each time until it finishes;
 * before some resumes an external agent forges `.harness/run.json` or `.harness/run.journal` (every kind of
 * forgeries.ts at least once), and the resume must refuse it. Then the same run in process, timing every write of
 * the default file store (whole snapshots and journal appends), and the cost of a side-effecting step against a
 * read-only one and a raw append + `fdatasync` (bench/step-cost.ts) and its system calls (bench/step-syscalls.ts). Prints kills, resumes, lost runs, re-done model
 * and tool calls, interrupted calls, lost artifacts, accepted forgeries, write sizes and times, for
 * `durability: 'sync'` and the default `'async'`.
 *
 * Run it with `npm run bench` (the lead wires it into bench/index.ts) or `tsx bench/durability.ts`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { FileRunStore } from '../src/durability/file-store.js';
import type { RunSnapshot, RunStore } from '../src/durability/types.js';
import { runCrashCampaign } from '../tests/durability/fixtures/crash-driver.js';
import { FORGERY_KINDS } from '../tests/durability/fixtures/forgeries.js';
import { scenarioHarness, TASK } from '../tests/durability/fixtures/scenario.js';
import { measureStepCost } from './step-cost.js';
import { stepSyscallsBench } from './step-syscalls.js';

const KILLS = Number(process.env.DURABILITY_KILLS ?? 30);
const SEED = 11;
const LATENCY_MS = 12;

/** A store that times each write of another: its whole snapshots and its journal appends. */
class TimedStore implements RunStore {
  readonly saveMs: number[] = [];
  readonly sizes: number[] = [];
  readonly appendMs: number[] = [];
  readonly appendSizes: number[] = [];
  constructor(private readonly inner: FileRunStore) {}
  async save(runId: string, snapshot: RunSnapshot): Promise<void> {
    const started = performance.now();
    await this.inner.save(runId, snapshot);
    this.saveMs.push(performance.now() - started);
    this.sizes.push(Buffer.byteLength(JSON.stringify(snapshot)));
  }
  async appendJournal(runId: string, lines: readonly string[]): Promise<void> {
    const started = performance.now();
    await this.inner.appendJournal(runId, lines);
    this.appendMs.push(performance.now() - started);
    this.appendSizes.push(lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0));
  }
  loadJournal(runId: string) {
    return this.inner.loadJournal(runId);
  }
  load(runId: string) {
    return this.inner.load(runId);
  }
  list() {
    return this.inner.list();
  }
  delete(runId: string) {
    return this.inner.delete(runId);
  }
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** Saves of one uninterrupted run in process: how many, how large, how long each took. */
async function measureSaves(root: string, durability: Durability) {
  const dir = path.join(root, 'timed');
  const store = new TimedStore(FileRunStore.inWorkspace(dir));
  const started = performance.now();
  const result = await scenarioHarness(dir, LATENCY_MS, { store, durability }).run({ task: TASK, runId: 'timed' });
  const runMs = performance.now() - started;
  const unsaved = performance.now();
  await scenarioHarness(path.join(root, 'unsaved'), LATENCY_MS, { store: false }).run(TASK);
  return { result, store, runMs, unsavedMs: performance.now() - unsaved };
}

type Durability = 'sync' | 'async';
const MODES: Durability[] = ['sync', 'async'];

export async function durabilityBench(): Promise<void> {
  const root = await mkdtemp(path.join(tmpdir(), 'harness-durability-bench-'));
  try {
    const campaigns = new Map<Durability, Awaited<ReturnType<typeof runCrashCampaign>>>();
    for (const durability of MODES) {
      const dir = path.join(root, durability);
      campaigns.set(
        durability,
        await runCrashCampaign({
          kills: KILLS,
          seed: SEED,
          latencyMs: LATENCY_MS,
          root: dir,
          durability,
          forgeries: FORGERY_KINDS.length,
        }),
      );
    }
    type Figures = Awaited<ReturnType<typeof runCrashCampaign>>;
    type Kill = Figures['kills'][number];
    const row = (value: (figures: Figures) => string | number) =>
      Object.fromEntries(MODES.map((mode) => [`durability ${mode}`, value(campaigns.get(mode) as Figures)]));
    const sum = (figures: Figures, pick: (k: Kill) => number) => figures.kills.reduce((n, k) => n + pick(k), 0);
    const max = (figures: Figures, pick: (k: Kill) => number) => Math.max(0, ...figures.kills.map(pick));
    console.log('Durability: SIGKILL and resume (scripted backend, %d ms per model and tool call)', LATENCY_MS);
    const categories = [...new Set([...campaigns.values()].flatMap((f) => f.kills.map((k) => k.category)))];
    console.table({
      kills: row((f) => f.kills.length),
      ...Object.fromEntries(
        categories.map((category) => [
          `  kills ${category}`,
          row((f) => f.kills.filter((k) => k.category === category).length),
        ]),
      ),
      'runs (each killed until it finished)': row((f) => f.runs),
      resumes: row((f) => f.resumes),
      'lost runs (a resume refused after a kill)': row((f) => f.lostRuns),
      're-done model calls (total / max per kill)': row(
        (f) => `${sum(f, (k) => k.redoneModelCalls)} / ${max(f, (k) => k.redoneModelCalls)}`,
      ),
      're-done tool calls (total / max per kill)': row(
        (f) => `${sum(f, (k) => k.redoneToolCalls)} / ${max(f, (k) => k.redoneToolCalls)}`,
      ),
      'interrupted write calls reported': row((f) => sum(f, (k) => k.interruptedCalls)),
      'interrupted calls run again by the harness': row((f) => sum(f, (k) => k.reinvokedInterrupted)),
      'extra model / tool calls over an uninterrupted run': row((f) => `${f.extra.modelCalls} / ${f.extra.toolCalls}`),
      'deliverables different from an uninterrupted run': row((f) => f.differentDeliverables),
      'lost artifacts': row((f) => f.lostArtifacts),
      'writes started without a stored record of them': row((f) => sum(f, (k) => k.unrecordedWrites)),
      'forgeries tried (kinds)': row((f) => `${f.forgeries.length} (${new Set(f.forgeries.map((g) => g.kind)).size})`),
      'forgeries accepted': row((f) => f.forgeries.filter((g) => g.refusedWith === undefined).length),
      'largest snapshot + journal between kills (bytes)': row((f) => f.maxSnapshotBytes),
    });
    console.log('Snapshots of one uninterrupted run (default file store, fsync on every save)');
    const timings = new Map<Durability, Awaited<ReturnType<typeof measureSaves>>>();
    for (const durability of MODES)
      timings.set(durability, await measureSaves(path.join(root, `timed-${durability}`), durability));
    const timed = (value: (t: Awaited<ReturnType<typeof measureSaves>>) => string | number) =>
      Object.fromEntries(
        MODES.map((mode) => [
          `durability ${mode}`,
          value(timings.get(mode) as Awaited<ReturnType<typeof measureSaves>>),
        ]),
      );
    console.table({
      'model calls / tool calls per run': timed(
        () => `${campaigns.get('sync')?.baseline.modelCalls} / ${campaigns.get('sync')?.baseline.toolCalls}`,
      ),
      'snapshots / journal appends written per run': timed(
        (t) => `${t.store.saveMs.length} / ${t.store.appendMs.length}`,
      ),
      'snapshot size, median / max (bytes)': timed(
        (t) => `${percentile(t.store.sizes, 50)} / ${Math.max(...t.store.sizes)}`,
      ),
      'journal line size, median / max (bytes)': timed(
        (t) => `${percentile(t.store.appendSizes, 50)} / ${Math.max(0, ...t.store.appendSizes)}`,
      ),
      'write time per snapshot, median / p95 (ms)': timed(
        (t) => `${percentile(t.store.saveMs, 50).toFixed(2)} / ${percentile(t.store.saveMs, 95).toFixed(2)}`,
      ),
      'write time per journal append, median / p95 (ms)': timed(
        (t) => `${percentile(t.store.appendMs, 50).toFixed(2)} / ${percentile(t.store.appendMs, 95).toFixed(2)}`,
      ),
      'run time with / without snapshots (ms)': timed((t) => `${t.runMs.toFixed(0)} / ${t.unsavedMs.toFixed(0)}`),
    });
    const cost = await measureStepCost();
    console.log(
      'One step of a 50-step loop (zero-latency model, default file store, durability async; medians of 9 rounds)',
    );
    console.table({
      'read-only step (ms)': cost.readOnlyMs.toFixed(2),
      'side-effecting step (ms)': cost.sideEffectMs.toFixed(2),
      'ratio side-effecting / read-only': (cost.sideEffectMs / cost.readOnlyMs).toFixed(2),
      'raw append + fdatasync, same disk (ms)': cost.rawAppendMs.toFixed(2),
      'extra cost of a side effect, in raw appends (median of the rounds)': cost.extraAppends.toFixed(2),
      'same, lowest / highest round': cost.extraAppendsRange.map((ratio) => ratio.toFixed(2)).join(' / '),
      'goal: at most about': '1.5',
    });
    await stepSyscallsBench();
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await durabilityBench();
