/**
 * The peer benchmark of issue 14: horizon-harness beside the Vercel AI SDK agent loop (`generateText` with
 * tools and a stop condition; the major version installed as a dev dependency), driven by the same zero-latency
 * fake model and workload, plus up to 1 000 concurrent harness runs in one process (issue 21's scale target). Each measurement runs in a fresh child process (clean RSS, cold imports), three
 * times; figures are medians. The children run this file bundled to plain JavaScript by esbuild with every
 * package left external, and import `horizon-harness` from the built `dist/` (built first if missing), as users
 * run the library. Prints each target of the issue as measured ratio, goal, yes/no.
 * @module
 */
import { execFileSync, fork } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ConcurrencyMeasurement, LATENCY_MS, SUBTASK_STEPS, measureConcurrency } from './concurrency.js';
import {
  type ImportMeasurement,
  type LoopConfig,
  type LoopMeasurement,
  measureImport,
  measureLoop,
} from './long-loop.js';

type ChildTask =
  | { kind: 'import'; specifier: 'horizon-harness' | 'ai' }
  | { kind: 'loop'; config: LoopConfig }
  | { kind: 'concurrency'; runs: number; store?: boolean };

const REPEATS = 3;
const STEPS = 200;
const CONCURRENCY_LEVELS = [1, 25, 50, 100, 1_000];
/** The levels the linear fit of memory per run covers (issue 14's); 1 000 runs have their own target. */
const FIT_LEVELS = [1, 25, 50, 100];
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

const PAPER_128K: LoopConfig = { loop: 'harness', steps: STEPS, window: 128_000, memory: 'paper' };

/**
 * The harness configurations of the long loop: both windows, paper defaults and aging (the targets, with the
 * default options), then what a host can tune: `store: false`, `durability: 'sync'`, and a tool with side effects.
 */
const HARNESS_LOOPS: Array<{ label: string; config: LoopConfig; tuned?: true }> = [
  { label: '128 K, paper defaults', config: PAPER_128K },
  { label: '128 K, aging', config: { ...PAPER_128K, memory: 'aging' } },
  { label: '32 K, paper defaults', config: { ...PAPER_128K, window: 32_000 } },
  { label: '32 K, aging', config: { ...PAPER_128K, window: 32_000, memory: 'aging' } },
  { label: '128 K, paper defaults, store: false', config: { ...PAPER_128K, store: false }, tuned: true },
  { label: "128 K, paper defaults, durability: 'sync'", config: { ...PAPER_128K, durability: 'sync' }, tuned: true },
  { label: '128 K, paper defaults, tool not read-only', config: { ...PAPER_128K, sideEffects: true }, tuned: true },
  { label: '128 K, paper defaults, eventLog: false', config: { ...PAPER_128K, eventLog: false }, tuned: true },
];
const AI_SDK_LOOP: LoopConfig = { loop: 'ai-sdk', steps: STEPS, window: 128_000 };

/** Everything one benchmark run measured (medians of {@link REPEATS} children each). */
export interface PeerResults {
  imports: { harness: ImportMeasurement; aiSdk: ImportMeasurement };
  /** `tuned`: a configuration other than the defaults, shown for what it costs; the targets use the others. */
  loops: Array<{ label: string; tuned?: true; measurement: LoopMeasurement }>;
  aiSdkLoop: LoopMeasurement;
  concurrency: ConcurrencyMeasurement[];
  /** The largest level again with `store: false`: what the snapshots cost under load. */
  concurrencyWithoutStore: ConcurrencyMeasurement;
}

/** The major version of the `ai` package installed (the AI SDK the loop is compared with). */
function aiSdkMajor(): string {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'ai', 'package.json'), 'utf8')) as {
    version: string;
  };
  return manifest.version.split('.')[0] ?? '?';
}

/** `npm run bench` entry point: measures everything and prints the tables and the targets. */
export async function peerBench(): Promise<PeerResults> {
  if (!existsSync(join(ROOT, 'dist', 'index.js'))) {
    process.stderr.write('dist/ is missing: building it with tsup…\n');
    execFileSync('npx', ['tsup'], { cwd: ROOT, stdio: 'inherit' });
  }
  const script = await compile();
  process.stderr.write('peer benchmark: imports…\n');
  const [harnessImport, aiSdkImport] = await interleaved<ImportMeasurement>(script, [
    { kind: 'import', specifier: 'horizon-harness' },
    { kind: 'import', specifier: 'ai' },
  ]);
  const imports = { harness: harnessImport!, aiSdk: aiSdkImport! };
  process.stderr.write('peer benchmark: long loops…\n');
  const [aiSdkLoop, ...harnessLoops] = await interleaved<LoopMeasurement>(script, [
    { kind: 'loop', config: AI_SDK_LOOP },
    ...HARNESS_LOOPS.map(({ config }) => ({ kind: 'loop' as const, config })),
  ]);
  const aiSdkTokens = await inChild<LoopMeasurement>(script, {
    kind: 'loop',
    config: { ...AI_SDK_LOOP, countTokens: true },
  });
  aiSdkLoop!.promptTokens = aiSdkTokens.promptTokens;
  // The harness's token figures too come from a child of their own per configuration, counting what it sent.
  const harnessTokens: LoopMeasurement[] = [];
  for (const { config } of HARNESS_LOOPS) {
    harnessTokens.push(
      await inChild<LoopMeasurement>(script, { kind: 'loop', config: { ...config, countTokens: true } }),
    );
  }
  const loops = HARNESS_LOOPS.map(({ label, tuned }, i) => ({
    label,
    ...(tuned ? { tuned } : {}),
    measurement: { ...harnessLoops[i]!, promptTokens: harnessTokens[i]!.promptTokens },
  }));
  process.stderr.write('peer benchmark: concurrent runs…\n');
  const [concurrencyWithoutStore, ...concurrency] = await interleaved<ConcurrencyMeasurement>(script, [
    { kind: 'concurrency', runs: CONCURRENCY_LEVELS.at(-1)!, store: false },
    ...CONCURRENCY_LEVELS.map((runs) => ({ kind: 'concurrency' as const, runs })),
  ]);
  const results = {
    imports,
    loops,
    aiSdkLoop: aiSdkLoop!,
    concurrency,
    concurrencyWithoutStore: concurrencyWithoutStore!,
  };
  console.log(report(results));
  return results;
}

/**
 * Each task's median over {@link REPEATS} rounds; a round runs every task once, one child at a time. Children side
 * by side would share the cores; rounds spread whatever else the machine does over every task alike, so the
 * ratios of one benchmark run compare measurements taken under the same load.
 */
async function interleaved<T extends object>(script: string, tasks: ChildTask[]): Promise<T[]> {
  const samples: T[][] = tasks.map(() => []);
  for (let round = 0; round < REPEATS; round++) {
    for (const [i, task] of tasks.entries()) samples[i]!.push(await inChild<T>(script, task));
  }
  return samples.map(medianOf);
}

/** The field-wise median of several measurements of one kind. */
function medianOf<T extends object>(samples: T[]): T {
  const out: Record<string, unknown> = { ...samples[0] };
  for (const key of Object.keys(out)) {
    const values = samples.map((sample) => (sample as Record<string, unknown>)[key]);
    if (values.every((value) => typeof value === 'number')) {
      const sorted = (values as number[]).sort((a, b) => a - b);
      out[key] = sorted[Math.floor(sorted.length / 2)];
    }
  }
  return out as T;
}

/** Least-squares slope and R² of y over x. */
export function linearFit(points: Array<[number, number]>): { slope: number; r2: number } {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  const syy = points.reduce((s, [, y]) => s + (y - my) ** 2, 0);
  const slope = sxy / sxx;
  return { slope, r2: syy === 0 ? 1 : (sxy * sxy) / (sxx * syy) };
}

const mb = (n: number) => `${n.toFixed(0)} MB`;
const ms = (n: number) => `${n.toFixed(3)} ms`;
const millions = (n: number) => `${(n / 1e6).toFixed(2)} M`;
const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
const target = (name: string, measured: string, goal: string, met: boolean) =>
  row([name, measured, goal, met ? 'yes' : '**no**']);

const floorOf = (c: ConcurrencyMeasurement) =>
  c.durableFloorMs === undefined ? 'not measured' : `${(c.durableFloorMs / 1000).toFixed(2)} s`;

/** The table of concurrent runs: each level with the store, then the largest without it. */
function concurrencyTable(concurrency: ConcurrencyMeasurement[], withoutStore: ConcurrencyMeasurement): string[] {
  const one = concurrency.find((c) => c.runs === 1)!;
  return [
    '| runs | succeeded | wall time | vs one run | RSS growth | event-loop delay p99 / max | CPU per run step | descriptors before / peak / after | open files at peak |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...[...concurrency, withoutStore].map((c) =>
      row([
        c === withoutStore ? `${c.runs}, store: false` : String(c.runs),
        String(c.succeeded),
        `${(c.wallMs / 1000).toFixed(2)} s`,
        `${(c.wallMs / one.wallMs).toFixed(2)}×`,
        `${c.rssGrowthMb.toFixed(1)} MB`,
        `${c.eventLoopDelayP99Ms.toFixed(1)} / ${c.eventLoopDelayMaxMs.toFixed(1)} ms`,
        `${c.cpuMsPerStep.toFixed(2)} ms`,
        `${c.fds.before} / ${c.fds.peak} / ${c.fds.after}`,
        String(c.openFilesPeak),
      ]),
    ),
  ];
}

/** Renders the measurements and the targets as Markdown tables. */
export function report({ imports, loops, aiSdkLoop, concurrency, concurrencyWithoutStore }: PeerResults): string {
  const lines = [
    `\nPeer benchmark: horizon-harness (dist/) vs Vercel AI SDK ${aiSdkMajor()} generateText, N = ${STEPS} tool calls of 20 000 chars, zero-latency fake model, medians of ${REPEATS} child processes, node ${process.version}\n`,
    '| | import time | RSS after import | RSS before loop | peak RSS | overhead per step | Σ prompt tokens |',
    '|---|---:|---:|---:|---:|---:|---:|',
    row([
      `Vercel AI SDK ${aiSdkMajor()} (full history)`,
      ms(imports.aiSdk.importMs),
      mb(imports.aiSdk.rssMb),
      mb(aiSdkLoop.rssBeforeLoopMb),
      mb(aiSdkLoop.peakRssMb),
      ms(aiSdkLoop.overheadMsPerStep),
      millions(aiSdkLoop.promptTokens),
    ]),
  ];
  for (const { label, measurement: m } of loops) {
    lines.push(
      row([
        `horizon-harness, ${label}`,
        ms(imports.harness.importMs),
        mb(imports.harness.rssMb),
        mb(m.rssBeforeLoopMb),
        mb(m.peakRssMb),
        ms(m.overheadMsPerStep),
        millions(m.promptTokens),
      ]),
    );
  }
  const fit = linearFit(concurrency.filter((c) => FIT_LEVELS.includes(c.runs)).map((c) => [c.runs, c.rssGrowthMb]));
  const one = concurrency.find((c) => c.runs === 1)!;
  const hundred = concurrency.find((c) => c.runs === 100)!;
  const thousand = concurrency.find((c) => c.runs === 1_000)!;
  const perExtraRun = (thousand.rssGrowthMb - one.rssGrowthMb) / (thousand.runs - 1);
  lines.push(
    `\nConcurrent runs in one process: one harness, ${SUBTASK_STEPS}-step subtask per run, ${LATENCY_MS} ms simulated latency per model call\n`,
    ...concurrencyTable(concurrency, concurrencyWithoutStore),
    `\nRSS growth, linear fit over ${FIT_LEVELS.join(', ')} runs: ${fit.slope.toFixed(2)} MB per extra run (R² ${fit.r2.toFixed(3)}); 1 000 runs against one: ${perExtraRun.toFixed(2)} MB per extra run`,
    `Durable-write floor of 1 000 runs (three atomic durable file replaces each, all at once, nothing else): ${floorOf(thousand)}; one run ${(one.wallMs / 1000).toFixed(2)} s + that floor: ${((one.wallMs + (thousand.durableFloorMs ?? 0)) / one.wallMs).toFixed(2)}× one run\n`,
  );

  const importTime = imports.harness.importMs / imports.aiSdk.importMs;
  const importRss = imports.harness.rssMb / imports.aiSdk.rssMb;
  const defaults = loops.filter(({ tuned }) => !tuned);
  const peakRss = Math.max(...defaults.map(({ measurement }) => measurement.peakRssMb)) / aiSdkLoop.peakRssMb;
  const withLog = loops[0]!.measurement;
  const withoutLog = loops.find(({ label }) => label.endsWith('eventLog: false'))!.measurement;
  const logCost = withLog.overheadMsPerStep / withoutLog.overheadMsPerStep;
  lines.push(
    `Event log of the ${STEPS}-step loop (${loops[0]!.label}): ${(withLog.eventLogBytes / 1024).toFixed(0)} KB, ${(withLog.eventLogBytes / withLog.modelCalls).toFixed(0)} bytes per model call\n`,
  );
  lines.push(
    '| target | measured | goal | met |',
    '|---|---:|---:|---|',
    target("import time vs `import 'ai'`", `${importTime.toFixed(2)}×`, '≤ 1.2×', importTime <= 1.2),
    target("RSS after import vs `import 'ai'`", `${importRss.toFixed(2)}×`, '≤ 1.1×', importRss <= 1.1),
    target(
      `long loop N = ${STEPS}: peak RSS vs the AI SDK's (worst default configuration)`,
      `${peakRss.toFixed(2)}×`,
      '≤ 1.0×',
      peakRss <= 1,
    ),
    ...defaults.map(({ label, measurement }) => {
      const ratio = measurement.overheadMsPerStep / aiSdkLoop.overheadMsPerStep;
      return target(`overhead per step vs the AI SDK's, ${label}`, `${ratio.toFixed(2)}×`, '≤ 0.8×', ratio <= 0.8);
    }),
    target(
      'overhead per step with the event log vs without (128 K, paper defaults)',
      `${logCost.toFixed(2)}×`,
      '≤ 1.1×',
      logCost <= 1.1,
    ),
    target(
      '100 concurrent runs: all finish',
      `${hundred.succeeded} / ${hundred.runs}`,
      '100 / 100',
      hundred.succeeded === hundred.runs,
    ),
    target(
      "100 concurrent runs: wall time vs one run's",
      `${(hundred.wallMs / one.wallMs).toFixed(2)}×`,
      '≤ 1.5×',
      hundred.wallMs / one.wallMs <= 1.5,
    ),
    target('MB per extra run (linear fit)', `${fit.slope.toFixed(2)} MB`, '≤ 1.5 MB', fit.slope <= 1.5),
    target(
      'event-loop delay p99, 100 concurrent runs',
      `${hundred.eventLoopDelayP99Ms.toFixed(1)} ms`,
      '≤ 50 ms',
      hundred.eventLoopDelayP99Ms <= 50,
    ),
    target(
      '1 000 concurrent runs: all finish',
      `${thousand.succeeded} / ${thousand.runs}`,
      '1000 / 1000',
      thousand.succeeded === thousand.runs,
    ),
    target(
      "1 000 concurrent runs: wall time vs one run's",
      `${(thousand.wallMs / one.wallMs).toFixed(2)}×`,
      '≤ 1.5×',
      thousand.wallMs / one.wallMs <= 1.5,
    ),
    target('1 000 concurrent runs: MB per extra run', `${perExtraRun.toFixed(2)} MB`, '≤ 1 MB', perExtraRun <= 1),
    target(
      'event-loop delay p99, 1 000 concurrent runs',
      `${thousand.eventLoopDelayP99Ms.toFixed(1)} ms`,
      '≤ 50 ms',
      thousand.eventLoopDelayP99Ms <= 50,
    ),
    target(
      '1 000 concurrent runs: descriptors held once every run has returned',
      String(thousand.fds.after - thousand.fds.before),
      '0',
      thousand.fds.after <= thousand.fds.before,
    ),
  );
  return lines.join('\n');
}

/** Bundles this file (packages left external) into `.tmp/bench/` and returns the script's path. */
async function compile(): Promise<string> {
  const { build } = await import('esbuild');
  const outfile = join(ROOT, '.tmp', 'bench', 'peer.mjs');
  await build({
    entryPoints: [fileURLToPath(import.meta.url)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    // Named as well: tsconfig's paths map these to src/, and esbuild would bundle the source instead of dist/.
    external: ['horizon-harness', 'horizon-harness/*'],
    outfile,
    logLevel: 'warning',
  });
  return outfile;
}

function inChild<T>(script: string, task: ChildTask): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = fork(script, ['--peer-child', JSON.stringify(task)], {
      execArgv: [],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.once('message', (message) => resolve(message as T));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`peer benchmark child ${JSON.stringify(task)} exited with ${code}`));
    });
  });
}

function runChild(task: ChildTask): Promise<unknown> {
  if (task.kind === 'import') return measureImport(task.specifier);
  if (task.kind === 'loop') return measureLoop(task.config);
  return measureConcurrency(task.runs, task.store ?? true);
}

/**
 * `tsx bench/peer.ts --concurrency`: only the scale figures (1 and 1 000 concurrent runs, and 1 000 with
 * `store: false`), in children of the built `dist/` as in the full benchmark, medians of {@link REPEATS} rounds.
 */
async function concurrencyOnly(): Promise<void> {
  const script = await compile();
  const [withoutStore, ...concurrency] = await interleaved<ConcurrencyMeasurement>(script, [
    { kind: 'concurrency', runs: 1_000, store: false },
    { kind: 'concurrency', runs: 1 },
    { kind: 'concurrency', runs: 1_000 },
  ]);
  const [one, thousand] = concurrency as [ConcurrencyMeasurement, ConcurrencyMeasurement];
  console.log(
    [
      ...concurrencyTable(concurrency, withoutStore!),
      `\nDurable-write floor of 1 000 runs: ${floorOf(thousand)}; one run + that floor: ${((one.wallMs + (thousand.durableFloorMs ?? 0)) / one.wallMs).toFixed(2)}× one run`,
    ].join('\n'),
  );
}

if (process.argv[2] === '--concurrency') await concurrencyOnly();
if (process.argv[2] === '--peer-child') {
  runChild(JSON.parse(process.argv[3] ?? '{}') as ChildTask).then(
    (measurement) => process.send?.(measurement, () => process.exit(0)),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
