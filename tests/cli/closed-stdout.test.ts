import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { EXIT_CODES } from '../../src/cli/io.js';
import { helloAgent, startFakeOpenAI, type FakeOpenAI } from './support/fake-openai.js';

const root = path.resolve(import.meta.dirname, '../..');
let server: FakeOpenAI | undefined;
let tmp: string | undefined;
afterEach(async () => {
  await server?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
  server = undefined;
  tmp = undefined;
});

it('`run … | head -2`: a reader closing stdout aborts the run quietly (no EPIPE trace), exit 141, workspace kept', async () => {
  // The model answers only once the pipe is closed, so the run's next lines are written to a closed pipe.
  let pipeClosed!: () => void;
  const closed = new Promise<void>((resolve) => (pipeClosed = resolve));
  const agent = helloAgent();
  server = await startFakeOpenAI(async (body) => {
    await closed;
    return agent(body);
  });
  tmp = await mkdtemp(path.join(tmpdir(), 'harness-cli-epipe-'));
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/bin.ts', 'run', 'Write hello.md', '--base-url', server.baseURL, '--model', 'm'],
    {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: tmp, TMPDIR: tmp },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // What `head -2` does: read two lines, then close its end of the pipe.
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.split('\n').length > 2 && !child.stdout.destroyed) {
      child.stdout.destroy();
      pipeClosed();
    }
  });

  const code = await exited;

  expect(stderr).not.toMatch(/EPIPE|Error|at .*\.js/);
  expect(code).toBe(EXIT_CODES.outputClosed);
  const kept = /The workspace is kept: (.+)$/m.exec(stderr)?.[1];
  expect(kept, stderr).toBeDefined();
  expect(existsSync(kept!)).toBe(true);
}, 120_000); // a child process that loads the sources through tsx: slow to start on a busy machine
