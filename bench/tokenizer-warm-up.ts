/**
 * The first run of a process and gpt-tokenizer's rank table (issue 25): how long the event loop is blocked during a
 * server's first run. Cases, each in a fresh child process (the table loads once per process):
 * - in-thread: the table loaded and counted on the event loop's thread at the first count, as the harness did before
 *   the tokenizer's worker thread (a `memory.tokenizer` that does exactly that);
 * - cold: the harness as it is, no warm-up (the first count starts the load in a worker thread);
 * - warmed: `await warmUpTokenizer()` before the run.
 * One scripted run (`decomposition: false`, `verification: false`) while a 1 ms interval records how late it fires;
 * the figure is the longest lateness, i.e. the longest time no other callback of the process could run. The task
 * carries 200 KB of text, enough that its request is counted exactly. RSS is taken before the run (after the warm-up,
 * when there is one) and after it.
 *
 * Before that, the table's load alone: how long it takes from the first count and the longest event-loop turn meanwhile.
 *
 * Then the price of counting through the worker: the texts a 200-step tool loop counts (per step a tool call's
 * arguments, its tool name and a 20 000-character observation), counted by `gptTokenizer()` once it has loaded, against
 * gpt-tokenizer counting the same parts on this thread.
 *
 * Run it with `npm run bench` or `npx tsx bench/tokenizer-warm-up.ts`.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { countInBoundedParts } from '../src/memory/bounded-count.js';
import { MAX_TOKENIZED_CHARS, type Tokenizer } from '../src/memory/tokenizer.js';

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

type Case = 'in-thread' | 'cold' | 'warmed';
const CASES: readonly Case[] = ['in-thread', 'cold', 'warmed'];

interface ChildFigures {
  warmUpMs: number;
  firstRunBlockMs: number;
  firstRunMs: number;
  rssBeforeMb: number;
  rssAfterMb: number;
}

const NO_SPECIAL = { disallowedSpecial: new Set<string>() };
type EncodingModule = { countTokens(text: string, options: typeof NO_SPECIAL): number };
const requireHere = createRequire(import.meta.url);

/**
 * gpt-tokenizer on this thread, loaded by the first count, in the same bounded parts as `gptTokenizer`: the harness's
 * tokenizer before the worker thread.
 */
function inThreadTokenizer(): Tokenizer {
  let o200k: EncodingModule | undefined;
  const countPart = (part: string) => {
    o200k ??= requireHere('gpt-tokenizer/encoding/o200k_base') as EncodingModule;
    return o200k.countTokens(part, NO_SPECIAL);
  };
  const measure = (text: string) =>
    text.length > MAX_TOKENIZED_CHARS
      ? { tokens: Buffer.byteLength(text, 'utf8'), exact: false }
      : countInBoundedParts(text, countPart);
  return { boundedByUtf8Bytes: true, count: (text) => measure(text).tokens, measure };
}

/** In the child: one run of `which` case, measured as described above. */
async function child(which: Case): Promise<ChildFigures> {
  const { createHarness, warmUpTokenizer } = await import('../src/index.js');
  const { ScriptedBackend, submit } = await import('../src/testing/index.js');
  let warmUpMs = 0;
  if (which === 'warmed') {
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
    ...(which === 'in-thread' ? { memory: { tokenizer: inThreadTokenizer() } } : {}),
  });
  const rssBefore = process.memoryUsage().rss;
  let longest = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  const started = performance.now();
  await harness.run(`Summarise these notes in one paragraph.\n\n${TASK_NOTES}`);
  const firstRunMs = performance.now() - started;
  clearInterval(timer);
  longest = Math.max(longest, performance.now() - last);
  await harness.close();
  return {
    warmUpMs,
    firstRunBlockMs: longest,
    firstRunMs,
    rssBeforeMb: rssBefore / 1e6,
    rssAfterMb: process.memoryUsage().rss / 1e6,
  };
}

interface LoadFigures {
  loadMs: number;
  longestTurnMs: number;
}

/**
 * In the child: the table's load alone, from the first count of a short text until counts are exact, and the longest
 * turn of the event loop meanwhile (a `setImmediate` chain): in-thread the load is one turn; in the worker it is not
 * on the event loop at all.
 */
async function loadChild(inThread: boolean): Promise<LoadFigures> {
  const { gptTokenizer, warmUpTokenizer } = await import('../src/index.js');
  let longestTurnMs = 0;
  let loaded = false;
  let last = performance.now();
  const tick = () => {
    const now = performance.now();
    longestTurnMs = Math.max(longestTurnMs, now - last);
    last = now;
    if (!loaded) setImmediate(tick);
  };
  setImmediate(tick);
  await new Promise<void>((resolve) => setImmediate(resolve));
  const started = performance.now();
  if (inThread) inThreadTokenizer().count('hello world');
  else {
    gptTokenizer().count('hello world');
    await warmUpTokenizer();
  }
  const loadMs = performance.now() - started;
  loaded = true;
  await new Promise<void>((resolve) => setImmediate(resolve));
  return { loadMs, longestTurnMs };
}

function measureLoad(inThread: boolean): LoadFigures {
  const out = execFileSync(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), 'load', inThread ? 'in-thread' : 'worker'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  return JSON.parse(out.trim().split('\n').at(-1) as string) as LoadFigures;
}

function measure(which: Case): ChildFigures {
  const out = execFileSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), 'child', which], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return JSON.parse(out.trim().split('\n').at(-1) as string) as ChildFigures;
}

const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** The texts a 200-step tool loop counts: per step a tool call's arguments, its name and a 20 000-character output. */
function loopTexts(): string[] {
  const texts: string[] = [];
  for (let step = 0; step < 200; step++) {
    const at = (step * 997) % (TASK_NOTES.length - 20_000);
    texts.push(
      JSON.stringify({ path: `notes/part-${step}.md`, offset: at }),
      'read_file',
      TASK_NOTES.slice(at, at + 20_000),
    );
  }
  return texts;
}

/** Milliseconds `count` takes over `texts`, best of 3 (each pass counts every text once). */
function timeCounts(count: (text: string) => number, texts: readonly string[]): number {
  let best = Number.POSITIVE_INFINITY;
  for (let pass = 0; pass < 3; pass++) {
    const started = performance.now();
    for (const text of texts) count(text);
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

export async function tokenizerWarmUpBench(): Promise<void> {
  console.log(
    '\nLoading the o200k table (median of %d fresh processes): load time, longest event-loop turn meanwhile',
    RUNS,
  );
  for (const inThread of [true, false]) {
    const loads = Array.from({ length: RUNS }, () => measureLoad(inThread));
    console.log(
      '  %s: %s ms, longest turn %s ms',
      inThread ? 'on this thread (as before)' : 'in the worker thread',
      median(loads.map((f) => f.loadMs)).toFixed(0),
      median(loads.map((f) => f.longestTurnMs)).toFixed(1),
    );
  }

  console.log('\nFirst run of a process: longest event-loop block (median of %d fresh processes)', RUNS);
  const figures = new Map<Case, ChildFigures[]>();
  for (const which of CASES)
    figures.set(
      which,
      Array.from({ length: RUNS }, () => measure(which)),
    );
  const of = (which: Case, key: keyof ChildFigures) =>
    median((figures.get(which) as ChildFigures[]).map((f) => f[key]));
  const label: Record<Case, string> = {
    'in-thread': 'in-thread (the table loads on the event loop, as before)',
    cold: 'cold (the table loads in the worker thread)',
    warmed: 'warmed (await warmUpTokenizer() first: %s ms)',
  };
  for (const which of CASES) {
    console.log(
      `  ${label[which]}: %s ms blocked; first run %s ms; RSS %s → %s MB`,
      ...(which === 'warmed' ? [of(which, 'warmUpMs').toFixed(0)] : []),
      of(which, 'firstRunBlockMs').toFixed(0),
      of(which, 'firstRunMs').toFixed(0),
      of(which, 'rssBeforeMb').toFixed(0),
      of(which, 'rssAfterMb').toFixed(0),
    );
  }
  console.log(
    '  ratio cold / in-thread (longest block): %s',
    (of('cold', 'firstRunBlockMs') / of('in-thread', 'firstRunBlockMs')).toFixed(2),
  );

  const { gptTokenizer, warmUpTokenizer } = await import('../src/index.js');
  await warmUpTokenizer();
  const texts = loopTexts();
  const worker = gptTokenizer();
  const here = inThreadTokenizer();
  const sameCounts = texts.every((text) => worker.count(text) === here.count(text));
  // The short texts alone show the exchange's own cost: counting them is almost free on either thread.
  const short = texts.filter((text) => text.length < 1_000);
  const workerMs = timeCounts(worker.count, texts);
  const hereMs = timeCounts(here.count, texts);
  const workerShortMs = timeCounts(worker.count, short);
  const hereShortMs = timeCounts(here.count, short);
  console.log("\nCounting a 200-step loop's texts once loaded (best of 3), worker thread vs this thread:");
  console.log(
    '  all %d texts: %s ms vs %s ms (ratio %s); the %d short ones: %s ms vs %s ms (%s µs more per count); same counts: %s',
    texts.length,
    workerMs.toFixed(1),
    hereMs.toFixed(1),
    (workerMs / hereMs).toFixed(2),
    short.length,
    workerShortMs.toFixed(1),
    hereShortMs.toFixed(1),
    (((workerShortMs - hereShortMs) / short.length) * 1000).toFixed(0),
    sameCounts,
  );
}

if (process.argv[2] === 'child') console.log(JSON.stringify(await child(process.argv[3] as Case)));
else if (process.argv[2] === 'load') console.log(JSON.stringify(await loadChild(process.argv[3] === 'in-thread')));
else if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await tokenizerWarmUpBench();
