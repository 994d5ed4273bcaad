/**
 * The durability benchmark of issue 11: the crash test's scenario (3 subtasks, synthesis, a failed verification and
 * a repair, on a scripted backend with simulated latency) killed with SIGKILL at 30 seeded random points in child
 * processes and resumed each time until it finishes; then the same run in process, timing every snapshot save of
 * the default file store. Prints kills, resumes, re-done model and tool calls, interrupted calls, lost artifacts,
 * snapshot size and save time per step.
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
import { scenarioHarness, TASK } from '../tests/durability/fixtures/scenario.js';

const KILLS = Number(process.env.DURABILITY_KILLS ?? 30);
const SEED = 11;
const LATENCY_MS = 12;

/** A store that times each save of another. */
class TimedStore implements RunStore {
  readonly saveMs: number[] = [];
  readonly sizes: number[] = [];
  constructor(private readonly inner: RunStore) {}
  async save(runId: string, snapshot: RunSnapshot): Promise<void> {
    const started = performance.now();
    await this.inner.save(runId, snapshot);
    this.saveMs.push(performance.now() - started);
    this.sizes.push(Buffer.byteLength(JSON.stringify(snapshot)));
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
async function measureSaves(root: string) {
  const dir = path.join(root, 'timed');
  const store = new TimedStore(FileRunStore.inWorkspace(dir));
  const started = performance.now();
  const result = await scenarioHarness(dir, LATENCY_MS, { store }).run({ task: TASK, runId: 'timed' });
  const runMs = performance.now() - started;
  const unsaved = performance.now();
  await scenarioHarness(path.join(root, 'unsaved'), LATENCY_MS, { store: false }).run(TASK);
  return { result, store, runMs, unsavedMs: performance.now() - unsaved };
}

export async function durabilityBench(): Promise<void> {
  const root = await mkdtemp(path.join(tmpdir(), 'harness-durability-bench-'));
  try {
    const figures = await runCrashCampaign({ kills: KILLS, seed: SEED, latencyMs: LATENCY_MS, root });
    const sum = (pick: (k: (typeof figures.kills)[number]) => number) => figures.kills.reduce((n, k) => n + pick(k), 0);
    const max = (pick: (k: (typeof figures.kills)[number]) => number) => Math.max(0, ...figures.kills.map(pick));
    const timed = await measureSaves(root);
    const { saveMs, sizes } = timed.store;
    const byCategory = new Map<string, number>();
    for (const kill of figures.kills) byCategory.set(kill.category, (byCategory.get(kill.category) ?? 0) + 1);
    console.log('Durability: SIGKILL and resume (scripted backend, %d ms per model and tool call)', LATENCY_MS);
    console.table({
      kills: { value: figures.kills.length },
      ...Object.fromEntries([...byCategory].map(([category, n]) => [`  kills ${category}`, { value: n }])),
      'runs (each killed until it finished)': { value: figures.runs },
      resumes: { value: figures.resumes },
      're-done model calls (total / max per kill)': {
        value: `${sum((k) => k.redoneModelCalls)} / ${max((k) => k.redoneModelCalls)}`,
      },
      're-done tool calls (total / max per kill)': {
        value: `${sum((k) => k.redoneToolCalls)} / ${max((k) => k.redoneToolCalls)}`,
      },
      'interrupted write calls reported': { value: sum((k) => k.interruptedCalls) },
      'interrupted calls run again by the harness': { value: sum((k) => k.reinvokedInterrupted) },
      'extra model / tool calls over an uninterrupted run': {
        value: `${figures.extra.modelCalls} / ${figures.extra.toolCalls}`,
      },
      'deliverables different from an uninterrupted run': { value: figures.differentDeliverables },
      'lost artifacts': { value: figures.lostArtifacts },
    });
    console.log('Snapshots of one uninterrupted run (default file store, fsync on every save)');
    console.table({
      'saves per run': { value: saveMs.length },
      'model calls / tool calls per run': { value: `${figures.baseline.modelCalls} / ${figures.baseline.toolCalls}` },
      'snapshot size, median / max (bytes)': { value: `${percentile(sizes, 50)} / ${Math.max(...sizes)}` },
      'save time per step, median / p95 (ms)': {
        value: `${percentile(saveMs, 50).toFixed(2)} / ${percentile(saveMs, 95).toFixed(2)}`,
      },
      'run time with / without snapshots (ms)': { value: `${timed.runMs.toFixed(0)} / ${timed.unsavedMs.toFixed(0)}` },
      'largest snapshot between kills (bytes)': { value: figures.maxSnapshotBytes },
    });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await durabilityBench();
