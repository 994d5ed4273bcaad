import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { main, type CliIo } from '../../src/cli/main.js';
import { helloAgent, startFakeOpenAI, type FakeOpenAI } from './support/fake-openai.js';

let server: FakeOpenAI | undefined;
let tmp: string | undefined;
afterEach(async () => {
  await server?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
  server = undefined;
  tmp = undefined;
});

async function cli(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
  };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

async function setUp() {
  server = await startFakeOpenAI(helloAgent());
  tmp = await mkdtemp(path.join(tmpdir(), 'harness-cli-attach-'));
  const flags = ['--base-url', server.baseURL, '--model', 'm', '--workspace', path.join(tmp, 'ws')];
  return { flags, dir: tmp };
}

it('--attach takes one file per flag: `--attach ./brief.txt "Summarise brief"` runs the task with one attachment', async () => {
  const { flags, dir } = await setUp();
  const brief = path.join(dir, 'brief.txt');
  await writeFile(brief, 'The brief.');
  const { code, stderr } = await cli(['run', '--attach', brief, 'Summarise brief', ...flags]);
  expect(stderr).toBe('');
  expect(code).toBe(0);
  expect(await readFile(path.join(dir, 'ws', 'attachments', 'brief.txt'), 'utf8')).toBe('The brief.');
  const firstRequest = JSON.stringify(server!.requests[0]);
  expect(firstRequest).toContain('Summarise brief');
});

it('--attach repeats for several files', async () => {
  const { flags, dir } = await setUp();
  const files = ['a.txt', 'b.txt'].map((name) => path.join(dir, name));
  for (const file of files) await writeFile(file, path.basename(file));
  const { code } = await cli(['run', 'Summarise both', '--attach', files[0]!, '--attach', files[1]!, ...flags]);
  expect(code).toBe(0);
  for (const name of ['a.txt', 'b.txt'])
    expect(await readFile(path.join(dir, 'ws', 'attachments', name), 'utf8')).toBe(name);
});

it('two files after one --attach: a usage error that says what happened, nothing run', async () => {
  const { flags, dir } = await setUp();
  const { code, stderr } = await cli([
    'run',
    '--attach',
    path.join(dir, 'a.txt'),
    path.join(dir, 'b.txt'),
    'Task',
    ...flags,
  ]);
  expect(code).toBe(2);
  expect(stderr).toMatch(/too many arguments/i);
  expect(server!.requests).toHaveLength(0);
});
