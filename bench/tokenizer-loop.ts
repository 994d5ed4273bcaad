/**
 * The hostile-text benchmark of issue 22: how long one token count blocks the event loop, before and after counting
 * in bounded parts. "Before" is gpt-tokenizer's count of the whole text in one call (what `gptTokenizer` did until
 * then); "after" is `gptTokenizer().count`. Each figure is how late a timer due at once fires when one count runs
 * right after it was set (the delay every other callback sees), the median of 3.
 *
 * The whole-text count of a 400 KB run of one letter takes minutes (it is quadratic), so by default "before" is
 * measured at 50 KB and scaled to 400 KB by the square of the size (×64; the measured 25 KB → 50 KB step is shown to
 * check the shape); `BENCH_FULL=1` measures it at 400 KB instead.
 *
 * Run it with `npm run bench` or `npx tsx bench/tokenizer-loop.ts`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gptTokenizer } from '../src/memory/tokenizer.js';

const RUNS = 3;
const PAGE_CHARS = 400_000;
const NO_SPECIAL = { disallowedSpecial: new Set<string>() };

const o200k = createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as {
  countTokens(text: string, options: typeof NO_SPECIAL): number;
};
const wholeCount = (text: string) => o200k.countTokens(text, NO_SPECIAL);
const boundedCount = (text: string) => gptTokenizer().count(text);

/**
 * How late a timer due at once fires when `count(text)` runs right after it was set: the delay every other callback
 * of the process sees. Median of {@link RUNS}, in ms.
 */
async function maxDelay(count: (text: string) => number, text: string): Promise<number> {
  const delays: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    // A new text each run (one letter more), so gpt-tokenizer's merge cache cannot answer from the run before.
    const input = `${text}${'b'.repeat(run)}`;
    await nextTurn();
    const set = performance.now();
    const late = new Promise<number>((resolve) => setTimeout(() => resolve(performance.now() - set), 0));
    count(input);
    delays.push(await late);
  }
  return delays.sort((a, b) => a - b)[Math.floor(RUNS / 2)] as number;
}

export async function tokenizerLoopBench(): Promise<void> {
  console.log('\nHostile text: event-loop delay while one token count runs (median of %d)', RUNS);
  boundedCount('warm up');
  wholeCount('warm up');
  const page = 'a'.repeat(PAGE_CHARS);
  const after = await maxDelay(boundedCount, page);
  let before: number;
  let how: string;
  if (process.env.BENCH_FULL === '1') {
    before = await maxDelay(wholeCount, page);
    how = 'measured';
  } else {
    const quarter = await maxDelay(wholeCount, 'a'.repeat(25_000));
    const half = await maxDelay(wholeCount, 'a'.repeat(50_000));
    before = half * (PAGE_CHARS / 50_000) ** 2;
    how = `50 KB ${half.toFixed(0)} ms × 64 (25 KB: ${quarter.toFixed(0)} ms, ratio ${(half / quarter).toFixed(1)}; 4 = quadratic)`;
  }
  console.log('  400 KB of one letter, whole text in one call (before): %s ms (%s)', before.toFixed(0), how);
  console.log('  400 KB of one letter, bounded parts (after):            %s ms', after.toFixed(1));
  console.log('  ratio after / before: %s', (after / before).toExponential(1));
  // Varied prose: this repository's docs, so gpt-tokenizer's merge cache helps neither side more than in real use.
  const docs = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs');
  const files = readdirSync(docs).filter((name) => name.endsWith('.md'));
  const prose = files
    .map((name) => readFileSync(path.join(docs, name), 'utf8'))
    .join('\n')
    .slice(0, PAGE_CHARS);
  // Both warmed on the prose first: the first call of each compiles its code paths.
  wholeCount(`${prose}w`);
  boundedCount(`${prose}w`);
  const proseBefore = await maxDelay(wholeCount, prose);
  const proseAfter = await maxDelay(boundedCount, prose);
  console.log(
    '  %s KB of docs/*.md: whole %s ms, bounded %s ms (ratio %s)',
    Math.round(prose.length / 1000),
    proseBefore.toFixed(0),
    proseAfter.toFixed(0),
    (proseAfter / proseBefore).toFixed(2),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await tokenizerLoopBench();
