/**
 * The first run of a process and gpt-tokenizer's rank table (issue 25): how long the event loop is blocked during a
 * server's first run, without and with `await warmUpTokenizer()` at start. Each case runs in a fresh child process
 * (the table loads once per process): one scripted run (`decomposition: false`, `verification: false`), while a 1 ms
 * interval records how late it fires; the figure is the longest lateness, i.e. the longest time no other callback of
 * the process could run. The task carries 200 KB of text, enough that its request is counted exactly. RSS is taken before the run (after the warm-up, when there is one) and after it.
 *
 * Run it with `npm run bench` or `npx tsx bench/tokenizer-warm-up.ts`.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = 3;
/**
 * 200 KB of this repository's docs as the task's material: a request whose UTF-8 bytes pass the compression
 * threshold of a 128 K window is counted exactly, which is what loads the table (a small request is sent on its byte
 * bound and never needs it).
 */
const TASK_NOTES = readdirSync(path.join(ROOT, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => readFileSync(path.join(ROOT, 'docs', name), 'utf8'))
  .join('\n')
  .slice(0, 200_000);

interface ChildFigures {
  warmUpMs: number;
  firstRunBlockMs: number;
  rssBeforeMb: number;
  rssAfterMb: number;
}

/** In the child: one run (after a warm-up when `warm`), measured as described above. */
async function child(warm: boolean): Promise<ChildFigures> {
  const { createHarness, warmUpTokenizer } = await import('../src/index.js');
  const { ScriptedBackend, submit } = await import('../src/testing/index.js');
  let warmUpMs = 0;
  if (warm) {
    const started = performance.now();
    await warmUpTokenizer();
    warmUpMs = performance.now() - started;
  }
  const harness = createHarness({
    backend: new ScriptedBackend({ execute: [submit('done')] }),
    decomposition: false,
    verification: false,
    store: false,
    workspace: { keep: false },
  });
  const rssBefore = process.memoryUsage().rss;
  let longest = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  await harness.run(`Summarise these notes in one paragraph.\n\n${TASK_NOTES}`);
  clearInterval(timer);
  longest = Math.max(longest, performance.now() - last);
  await harness.close();
  return {
    warmUpMs,
    firstRunBlockMs: longest,
    rssBeforeMb: rssBefore / 1e6,
    rssAfterMb: process.memoryUsage().rss / 1e6,
  };
}

function measure(warm: boolean): ChildFigures {
  const out = execFileSync(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), 'child', warm ? 'warm' : 'cold'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  return JSON.parse(out.trim().split('\n').at(-1) as string) as ChildFigures;
}

const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

export async function tokenizerWarmUpBench(): Promise<void> {
  console.log(
    '\nFirst run of a process: longest event-loop block, without and with warmUpTokenizer() (median of %d)',
    RUNS,
  );
  const cold = Array.from({ length: RUNS }, () => measure(false));
  const warm = Array.from({ length: RUNS }, () => measure(true));
  const coldBlock = median(cold.map((f) => f.firstRunBlockMs));
  const warmBlock = median(warm.map((f) => f.firstRunBlockMs));
  console.log(
    '  cold (the first count loads the table): %s ms blocked; RSS %s → %s MB',
    coldBlock.toFixed(0),
    median(cold.map((f) => f.rssBeforeMb)).toFixed(0),
    median(cold.map((f) => f.rssAfterMb)).toFixed(0),
  );
  console.log(
    '  warmed at start (await warmUpTokenizer(): %s ms, before the run): %s ms blocked; RSS %s → %s MB',
    median(warm.map((f) => f.warmUpMs)).toFixed(0),
    warmBlock.toFixed(0),
    median(warm.map((f) => f.rssBeforeMb)).toFixed(0),
    median(warm.map((f) => f.rssAfterMb)).toFixed(0),
  );
  console.log('  ratio warmed / cold: %s', (warmBlock / coldBlock).toFixed(2));
}

if (process.argv[2] === 'child') console.log(JSON.stringify(await child(process.argv[3] === 'warm')));
else if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await tokenizerWarmUpBench();
