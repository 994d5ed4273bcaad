import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { spawnCli } from './support/cli-process.js';
import { startFakeOpenAI, type FakeOpenAI } from './support/fake-openai.js';

let server: FakeOpenAI | undefined;
let tmp: string | undefined;
afterEach(async () => {
  await server?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
  server = undefined;
  tmp = undefined;
});

it('Ctrl-C (SIGINT) aborts a run waiting on the model: exit 130, the workspace kept and its path printed', async () => {
  server = await startFakeOpenAI(() => 'stall');
  tmp = await mkdtemp(path.join(tmpdir(), 'harness-cli-sigint-'));
  // Only what a user's shell would pass; the default workspace goes under TMPDIR.
  const child = spawnCli(['run', 'Write hello.md', '--base-url', server.baseURL, '--model', 'fake-model'], {
    PATH: process.env.PATH ?? '',
    HOME: tmp,
    TMPDIR: tmp,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

  await server.firstRequest;
  child.kill('SIGINT');
  const code = await exited;

  expect(code).toBe(130);
  const workspace = /The workspace is kept: (.+)$/m.exec(stderr)?.[1];
  expect(workspace, stderr).toBeDefined();
  expect(path.dirname(workspace!)).toBe(tmp);
  expect(existsSync(workspace!)).toBe(true);
  expect(stdout).toContain(`workspace: ${workspace}`);
  expect(stdout).toContain('■ aborted');
}, 120_000); // a child process that loads the sources through tsx: slow to start on a busy machine
