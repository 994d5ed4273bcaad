import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryManager } from '../../src/memory/memory-manager.js';
import { editFileTool } from '../../src/tools/builtin/edit-file.js';
import { readFileTool } from '../../src/tools/builtin/read-file.js';
import { writeToFileTool } from '../../src/tools/builtin/write-to-file.js';
import { LocalWorkspace } from '../../src/workspace/index.js';
import { deterministicText, fakeBackend, invocation, scopeFor } from '../memory/helpers.js';
import { invoke, toolContext } from './support/tool-context.js';

/** More attempts than libuv has threads (4 by default): a blocking open in each would leave none for later calls. */
const ATTEMPTS = 6;

let base: string;
let workspace: LocalWorkspace;
const fifos: string[] = [];

function mkfifo(absPath: string): string {
  execFileSync('mkfifo', [absPath]);
  fifos.push(absPath);
  return absPath;
}

beforeEach(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'ws-special-'));
  workspace = await LocalWorkspace.create({ dir: path.join(base, 'ws') });
  await writeFile(path.join(workspace.root, 'ok.txt'), 'still works');
});

afterEach(async () => {
  // Should an open have blocked on a FIFO, opening its other end for a moment frees the thread it holds.
  for (const fifo of fifos.splice(0)) {
    try {
      closeSync(openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK));
    } catch {
      // Already gone or replaced: nothing waits on it.
    }
  }
  await workspace.dispose();
  await rm(base, { recursive: true, force: true });
});

/** Runs `operation` more times than the thread pool has threads, then checks that file I/O still completes. */
async function expectRefusedWithoutBlocking(operation: () => Promise<unknown>, message: RegExp): Promise<void> {
  const outcomes = await Promise.allSettled(Array.from({ length: ATTEMPTS }, operation));
  for (const outcome of outcomes) {
    expect(outcome.status).toBe('rejected');
    const error = (outcome as PromiseRejectedResult).reason as { code?: string; message: string };
    expect(error.code).toBe('invalid-input');
    expect(error.message).toMatch(message);
  }
  expect((await workspace.readFile('ok.txt')).toString()).toBe('still works');
}

/** As above for a tool: an error observation, then file I/O still completes. */
async function expectToolRefusedWithoutBlocking(
  run: () => Promise<{ isError: boolean; text: string }>,
  message: RegExp,
) {
  const results = await Promise.all(Array.from({ length: ATTEMPTS }, run));
  for (const result of results) {
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(message);
  }
  expect((await workspace.readFile('ok.txt')).toString()).toBe('still works');
}

const NOT_REGULAR = /is not a regular file/;

describe.runIf(process.platform !== 'win32')(
  'FIFOs and sockets in the workspace never block a read, write or copy (issue #13)',
  () => {
    it('readFile and preview refuse a FIFO, and read_file and edit_file say so', async () => {
      mkfifo(path.join(workspace.root, 'data.csv'));
      await expectRefusedWithoutBlocking(() => workspace.readFile('data.csv'), NOT_REGULAR);
      await expectRefusedWithoutBlocking(() => workspace.preview('data.csv'), NOT_REGULAR);
      const context = toolContext(workspace);
      await expectToolRefusedWithoutBlocking(() => invoke(readFileTool(), { path: 'data.csv' }, context), NOT_REGULAR);
      await expectToolRefusedWithoutBlocking(
        () => invoke(readFileTool(), { path: 'data.csv', startLine: 1, endLine: 2 }, context),
        NOT_REGULAR,
      );
      await expectToolRefusedWithoutBlocking(
        () => invoke(editFileTool(), { path: 'data.csv', search: 'a', replace: 'b' }, context),
        NOT_REGULAR,
      );
    });

    it('writeFile and write_to_file refuse to replace a FIFO', async () => {
      mkfifo(path.join(workspace.root, 'report.md'));
      await expectRefusedWithoutBlocking(
        () => workspace.writeFile('report.md', '# Report', { tool: 't' }),
        NOT_REGULAR,
      );
      const context = toolContext(workspace);
      await expectToolRefusedWithoutBlocking(
        () => invoke(writeToFileTool(), { path: 'report.md', content: '# Report' }, context),
        NOT_REGULAR,
      );
      expect(workspace.artifacts()).toEqual([]);
    });

    it('the memory log under .harness/outputs being a FIFO: the save fails with a warning, the step goes on', async () => {
      await mkdir(path.join(workspace.root, '.harness/outputs'), { recursive: true });
      mkfifo(path.join(workspace.root, '.harness/outputs/subtask-1.txt'));
      const scope = scopeFor(fakeBackend(32_000), workspace);
      const memory = new MemoryManager();
      const observations = await Promise.all(
        Array.from({ length: ATTEMPTS }, (_, i) =>
          memory.boundObservation(invocation(deterministicText(i, 20_000), 'text', `c${i}`), scope),
        ),
      );
      for (const observation of observations) expect(observation).toContain('the full output could not be saved');
      const warnings = scope.events.filter((e) => e.type === 'run-warning') as Array<{ code: string; message: string }>;
      expect(warnings).toHaveLength(ATTEMPTS);
      expect(warnings[0]!.message).toMatch(NOT_REGULAR);
      expect((await workspace.readFile('ok.txt')).toString()).toBe('still works');
    });

    it('copyIn refuses a FIFO as the attachment, and as the destination', async () => {
      const source = mkfifo(path.join(base, 'attachment.csv'));
      await expectRefusedWithoutBlocking(() => workspace.copyIn(source, 'attachments/attachment.csv'), NOT_REGULAR);
      expect(await readdir(workspace.root)).toEqual(['ok.txt']);
      await writeFile(path.join(base, 'real.csv'), 'a,b\n');
      mkfifo(path.join(workspace.root, 'copy.csv'));
      await expectRefusedWithoutBlocking(() => workspace.copyIn(path.join(base, 'real.csv'), 'copy.csv'), NOT_REGULAR);
    });

    it('readFile refuses a socket with the same clear error', async () => {
      const { createServer } = await import('node:net');
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(path.join(workspace.root, 'sock'), resolve));
      try {
        await expectRefusedWithoutBlocking(() => workspace.readFile('sock'), NOT_REGULAR);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });

    it('recordArtifact skips a FIFO instead of hashing it', async () => {
      mkfifo(path.join(workspace.root, 'plot.png'));
      const records = await Promise.all(
        Array.from({ length: ATTEMPTS }, () => workspace.recordArtifact('plot.png', { tool: 'python_interpreter' })),
      );
      expect(records.every((record) => record === undefined)).toBe(true);
      expect(await readFile(path.join(workspace.root, 'ok.txt'), 'utf8')).toBe('still works');
    });
  },
);
