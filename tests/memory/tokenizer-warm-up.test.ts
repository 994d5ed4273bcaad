import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * In a fresh process (the tables load once per process): whether gpt-tokenizer's o200k_base rank table is loaded after
 * importing the package, after createHarness, right after calling warmUpTokenizer(), and once it resolved.
 */
const CHILD = `
  import { createRequire } from 'node:module';
  import { createHarness, warmUpTokenizer } from './src/index.ts';
  import { ScriptedBackend } from './src/testing/index.ts';
  const cache = createRequire(import.meta.url).cache;
  const loaded = () => Object.keys(cache).some((file) => /bpeRanks[\\\\/]o200k_base/.test(file));
  const seen = { afterImport: loaded() };
  createHarness({ backend: new ScriptedBackend([]) });
  seen.afterCreate = loaded();
  const warming = warmUpTokenizer();
  seen.whileCallReturns = loaded();
  await warming;
  seen.afterWarmUp = loaded();
  console.log(JSON.stringify(seen));
`;

it('the tables load neither on import nor in createHarness, and warmUpTokenizer() loads them after it returns', async () => {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD], {
    cwd: ROOT,
  });
  expect(JSON.parse(stdout)).toEqual({
    afterImport: false,
    afterCreate: false,
    whileCallReturns: false,
    afterWarmUp: true,
  });
}, 120_000);

it('an unknown encoding is refused, naming the valid ones', async () => {
  const { warmUpTokenizer } = await import('../../src/memory/tokenizer.js');
  await expect(warmUpTokenizer('gpt5' as never)).rejects.toThrow(/o200k_base/);
});
