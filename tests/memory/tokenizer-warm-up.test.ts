import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

/** Runs `source` as an ES module in a fresh process (the tables load once per process) and parses its last line. */
async function inFreshProcess(source: string): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', source], {
    cwd: ROOT,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1) as string) as Record<string, unknown>;
}

// Whether this thread (not a worker) has required gpt-tokenizer's o200k_base rank table.
const LOADED_HERE = `
  import { createRequire } from 'node:module';
  const cache = createRequire(import.meta.url).cache;
  const loadedHere = () => Object.keys(cache).some((file) => /bpeRanks[\\\\/]o200k_base/.test(file));
`;

it('the tables load neither on import, nor in createHarness, nor ever on the calling thread', async () => {
  const seen = await inFreshProcess(`
    ${LOADED_HERE}
    import { createHarness, gptTokenizer, warmUpTokenizer } from './src/index.ts';
    import { ScriptedBackend } from './src/testing/index.ts';
    const seen = { afterImport: loadedHere() };
    createHarness({ backend: new ScriptedBackend([]) });
    seen.afterCreate = loadedHere();
    await warmUpTokenizer();
    seen.afterWarmUp = loadedHere();
    seen.count = gptTokenizer().measure('hello world');
    seen.stillNotHere = loadedHere();
    console.log(JSON.stringify(seen));
  `);
  expect(seen).toEqual({
    afterImport: false,
    afterCreate: false,
    afterWarmUp: false,
    count: { tokens: 2, exact: true },
    stillNotHere: false,
  });
}, 120_000);

it('the first count answers the byte bound at once, the event loop keeps turning during the load, and counts are then exact', async () => {
  const seen = await inFreshProcess(`
    ${LOADED_HERE}
    import { gptTokenizer, warmUpTokenizer } from './src/index.ts';
    const text = 'The river runs north, then west; 42 bridges cross it. '.repeat(2_000);
    const tokenizer = gptTokenizer();
    const first = tokenizer.measure(text);
    // The longest turn of the event loop while the tables load, against the load's own duration: a load on this
    // thread would be one turn as long as the load.
    let turns = 0;
    let longestTurn = 0;
    let last = performance.now();
    let loaded = false;
    const tick = () => {
      const now = performance.now();
      longestTurn = Math.max(longestTurn, now - last);
      last = now;
      turns++;
      if (!loaded) setImmediate(tick);
    };
    const started = performance.now();
    setImmediate(tick);
    await warmUpTokenizer();
    loaded = true;
    const loadMs = performance.now() - started;
    const after = tokenizer.measure(text);
    const reference = createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base')
      .countTokens(text, { disallowedSpecial: new Set() });
    console.log(JSON.stringify({
      first,
      bytes: Buffer.byteLength(text),
      turns,
      longestTurnShare: longestTurn / loadMs,
      after,
      reference,
    }));
  `);
  expect(seen.first).toEqual({ tokens: seen.bytes, exact: false, loading: true });
  expect(seen.turns).toBeGreaterThan(10);
  // Before the worker, the load was a single turn: its share of the load was about 1.
  expect(seen.longestTurnShare).toBeLessThan(0.25);
  expect(seen.after).toEqual({ tokens: seen.reference, exact: true });
}, 120_000);

it('a cold first run counts its large request exactly (it waits for the tables) and does not compress it', async () => {
  const seen = await inFreshProcess(`
    ${LOADED_HERE}
    import { createHarness } from './src/index.ts';
    import { ScriptedBackend, submit } from './src/testing/index.ts';
    // Over the compression threshold of the 128 K window in UTF-8 bytes, far under it in tokens.
    const notes = 'The river runs north, then west; 42 bridges cross it. '.repeat(3_000);
    const harness = createHarness({
      backend: new ScriptedBackend({ execute: [submit('done')] }),
      decomposition: false,
      verification: false,
      store: false,
      workspace: { keep: false },
    });
    const events = [];
    harness.on('memory-compress', (event) => events.push(event.type));
    const requests = [];
    harness.on('llm-request', (event) => requests.push(event.requestTokens));
    const result = await harness.run('Summarise these notes.\\n\\n' + notes);
    await harness.close();
    console.log(JSON.stringify({ status: result.status, compressions: events.length, requests, bytes: notes.length, loadedHere: loadedHere() }));
  `);
  expect(seen).toMatchObject({ status: 'succeeded', compressions: 0, loadedHere: false });
  const [first] = seen.requests as number[];
  // The count, not the byte bound: a quarter of the bytes or less for this prose.
  expect(first).toBeLessThan((seen.bytes as number) / 3);
}, 120_000);

it('a simulated prompt cache reports counted input tokens on a cold first run, not the byte bound', async () => {
  const seen = await inFreshProcess(`
    import { createHarness } from './src/index.ts';
    import { ScriptedBackend, SimulatedPromptCache, submit, withSimulatedPromptCache } from './src/testing/index.ts';
    const scripted = new ScriptedBackend({ execute: [submit('done')] });
    const harness = createHarness({
      backend: withSimulatedPromptCache(scripted, { mode: 'automatic' }),
      decomposition: false,
      verification: false,
      store: false,
      workspace: { keep: false },
    });
    const reported = [];
    harness.on('llm-response', (event) => reported.push(event.usage.inputTokens));
    await harness.run('Summarise: the river runs north, then west; 42 bridges cross it.');
    await harness.close();
    // The same request observed by a fresh cache once the table is loaded.
    const fresh = new SimulatedPromptCache({ mode: 'automatic' });
    await fresh.ready();
    console.log(JSON.stringify({ reported: reported[0], counted: fresh.observe(scripted.calls[0]).inputTokens }));
  `);
  expect(seen.reported).toBe(seen.counted);
}, 120_000);

it('an unknown encoding is refused, naming the valid ones', async () => {
  const { warmUpTokenizer } = await import('../../src/memory/tokenizer.js');
  await expect(warmUpTokenizer('gpt5' as never)).rejects.toThrow(/o200k_base/);
});
