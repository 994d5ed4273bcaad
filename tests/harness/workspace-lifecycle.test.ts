import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, realpath, rm, writeFile as fsWriteFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createHarness } from '../../src/harness/harness.js';
import type { HarnessOptions } from '../../src/modes/shared/options.js';
import type { RunResult } from '../../src/contracts/work.js';
import { reply, submit, toolCall } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { LocalWorkspace } from '../../src/workspace/local-workspace.js';
import { decide } from '../managed/helpers.js';
import { collect, hang, tempDir, writeFile } from './helpers.js';

const TASK = 'Write notes.md with one line about rivers.';
const LOCK = path.join('.harness', 'run.lock');

/** Workspaces the harness made that a test may leave behind (kept ones); removed after each test. */
const leftovers: string[] = [];
afterEach(async () => {
  for (const dir of leftovers.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A run that writes notes.md and succeeds, or (`fail`) whose only subtask fails with an invalid tool reply. */
function backendFor(outcome: 'succeed' | 'fail'): ScriptedBackend {
  const boom = () => reply('');
  return new ScriptedBackend({
    execute:
      outcome === 'succeed'
        ? [toolCall('write_file', { path: 'notes.md', content: 'The Nile is long.' }), submit('done', ['notes.md'])]
        : [toolCall('write_file', { path: 'notes.md', content: 'draft' }), boom(), boom(), boom()],
  });
}

function harnessWith(outcome: 'succeed' | 'fail', options: Partial<HarnessOptions> = {}) {
  return createHarness({
    backend: backendFor(outcome),
    tools: [writeFile],
    decomposition: false,
    verification: false,
    ...options,
  });
}

/** A deferred promise the test settles. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

describe('workspace lifecycle: temporary workspaces and close()', () => {
  it('keeps a succeeded run’s temporary workspace until close(), which removes it', async () => {
    const harness = harnessWith('succeed');
    const events = collect(harness);
    const result = await harness.run(TASK);
    leftovers.push(result.workspace);
    expect(result.status).toBe('succeeded');
    expect(events.find((e) => e.type === 'run-start')).toMatchObject({ workspace: result.workspace });
    expect(path.dirname(result.workspace)).toBe(await realpath(os.tmpdir()));
    expect(await readFile(path.join(result.workspace, 'notes.md'), 'utf8')).toBe('The Nile is long.');
    expect(existsSync(path.join(result.workspace, LOCK))).toBe(false);

    expect(await harness.close()).toEqual({ removed: [result.workspace], kept: [] });
    expect(existsSync(result.workspace)).toBe(false);
  });

  it('keeps a failed run’s temporary workspace at close() for inspection', async () => {
    const harness = harnessWith('fail');
    const result = await harness.run(TASK);
    leftovers.push(result.workspace);
    expect(result.status).toBe('failed');
    expect(await harness.close()).toEqual({ removed: [], kept: [result.workspace] });
    expect(await readFile(path.join(result.workspace, 'notes.md'), 'utf8')).toBe('draft');
  });

  it('keep: true keeps every temporary workspace; keep: false removes failed ones too', async () => {
    const keeping = harnessWith('succeed', { workspace: { keep: true } });
    const kept = await keeping.run(TASK);
    leftovers.push(kept.workspace);
    expect(await keeping.close()).toEqual({ removed: [], kept: [kept.workspace] });
    expect(existsSync(path.join(kept.workspace, 'notes.md'))).toBe(true);

    const removing = harnessWith('fail', { workspace: { keep: false } });
    const failed = await removing.run(TASK);
    leftovers.push(failed.workspace);
    expect(failed.status).toBe('failed');
    expect(await removing.close()).toEqual({ removed: [failed.workspace], kept: [] });
    expect(existsSync(failed.workspace)).toBe(false);
  });

  it('never removes a directory the user named, given as a path or as { dir }', async () => {
    for (const option of [await tempDir(), { dir: path.join(await tempDir(), 'made-by-harness') }]) {
      const harness = harnessWith('succeed', { workspace: option });
      const result = await harness.run(TASK);
      expect(result.status).toBe('succeeded');
      expect(await harness.close()).toEqual({ removed: [], kept: [result.workspace] });
      expect(await readFile(path.join(result.workspace, 'notes.md'), 'utf8')).toBe('The Nile is long.');
    }
  });

  it('close() aborts a run in flight, waits for it, then rejects later runs', async () => {
    const backend = new ScriptedBackend({ execute: [toolCall('hang', {})] });
    const harness = createHarness({ backend, tools: [hang], decomposition: false, verification: false });
    const started = gate();
    harness.on('tool-call', () => started.open());
    const running = harness.run(TASK);
    await started.wait;
    const closed = await harness.close();
    const result = await running;
    leftovers.push(result.workspace);
    expect(result.status).toBe('aborted');
    // An aborted run did not succeed: its workspace is kept.
    expect(closed).toEqual({ removed: [], kept: [result.workspace] });
    expect(await harness.close()).toBe(closed);
    await expect(harness.run(TASK)).rejects.toMatchObject({
      code: 'harness-closed',
      message: expect.stringContaining('createHarness'),
    });
  });
});

describe('workspace lifecycle: one run per workspace', () => {
  it('lets exactly one of 10 concurrent runs on one directory run; nine get workspace-busy naming it', async () => {
    const dir = await tempDir();
    const open = gate();
    const holdOpen = defineTool({
      name: 'hold',
      description: 'Waits for the test.',
      input: z.object({}),
      execute: async () => {
        await open.wait;
        return 'held';
      },
    });
    const backend = new ScriptedBackend({ execute: [toolCall('hold', {}), submit('done')] });
    const harness = createHarness({
      backend,
      tools: [holdOpen],
      workspace: dir,
      decomposition: false,
      verification: false,
    });
    let runIds = 0;
    const runs = Array.from({ length: 10 }, () => harness.run({ task: TASK, runId: `run-${++runIds}` }));
    const rejected: unknown[] = [];
    for (const run of runs) run.catch((error: unknown) => rejected.push(error));
    await waitUntil(() => rejected.length === 9);
    open.open();
    const settled = await Promise.allSettled(runs);

    const fulfilled = settled.filter((s) => s.status === 'fulfilled');
    expect(fulfilled).toHaveLength(1);
    const winner = (fulfilled[0] as PromiseFulfilledResult<{ runId: string; status: string }>).value;
    expect(winner.status).toBe('succeeded');
    for (const error of rejected) {
      expect(error).toMatchObject({ code: 'workspace-busy' });
      expect((error as Error).message).toContain(`"${await realpath(dir)}"`);
      expect((error as Error).message).toContain(`run "${winner.runId}"`);
    }
    // The lock went with the run: the next run on the directory proceeds.
    expect((await harnessWith('succeed', { workspace: dir }).run(TASK)).status).toBe('succeeded');
  });

  it('locks a Workspace whose root is not a local directory within the process', async () => {
    const real = await LocalWorkspace.create({ dir: await tempDir() });
    const virtual = {
      root: path.join(real.root, 'not-on-disk'),
      resolve: real.resolve.bind(real),
      readFile: real.readFile.bind(real),
      writeFile: real.writeFile.bind(real),
      appendFile: real.appendFile.bind(real),
      copyIn: real.copyIn.bind(real),
      recordArtifact: real.recordArtifact.bind(real),
      artifacts: real.artifacts.bind(real),
      exists: real.exists.bind(real),
      preview: real.preview.bind(real),
    };
    const open = gate();
    const hold = defineTool({
      name: 'hold',
      description: 'Waits.',
      input: z.object({}),
      execute: () => open.wait.then(() => 'held'),
    });
    const backend = new ScriptedBackend({ execute: [toolCall('hold', {}), submit('done'), submit('again')] });
    const harness = createHarness({
      backend,
      tools: [hold],
      workspace: virtual,
      decomposition: false,
      verification: false,
    });
    const started = gate();
    harness.on('tool-call', () => started.open());
    const first = harness.run({ task: TASK, runId: 'first' });
    await started.wait;
    await expect(harness.run(TASK)).rejects.toMatchObject({
      code: 'workspace-busy',
      message: expect.stringContaining('run "first"'),
    });
    open.open();
    expect((await first).status).toBe('succeeded');
    expect((await harness.run(TASK)).status).toBe('succeeded');
  });

  it.each(['pipeline', 'managed'] as const)(
    'unlocks the workspace before run-finish, so a listener can start the next run on it (%s mode)',
    async (mode) => {
      const dir = await tempDir();
      const backend = new ScriptedBackend(
        mode === 'pipeline'
          ? { execute: [submit('one'), submit('two')] }
          : { manage: [decide('blocked'), decide('blocked')] },
      );
      const harness = createHarness({ backend, workspace: dir, mode, decomposition: false, verification: false });
      let next: Promise<RunResult> | undefined;
      let lockedAtFinish: boolean | undefined;
      harness.on('run-finish', () => {
        lockedAtFinish ??= existsSync(path.join(dir, LOCK));
        next ??= harness.run(TASK);
      });
      const first = await harness.run(TASK);
      expect(lockedAtFinish).toBe(false);
      const second = await next;
      expect(second?.workspace).toBe(first.workspace);
      expect(existsSync(path.join(dir, LOCK))).toBe(false);
    },
  );

  it('takes over a lock left by a process that has exited', async () => {
    const dir = await tempDir();
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid;
    await writeLock(dir, { runId: 'crashed-run', pid: deadPid, hostname: os.hostname() });
    const result = await harnessWith('succeed', { workspace: dir }).run(TASK);
    expect(result.status).toBe('succeeded');
    expect(existsSync(path.join(dir, LOCK))).toBe(false);
  });

  it('refuses a directory locked by a live process of this host or by another host', async () => {
    const dir = await tempDir();
    await writeLock(dir, { runId: 'their-run', pid: process.ppid, hostname: os.hostname() });
    await expect(harnessWith('succeed', { workspace: dir }).run(TASK)).rejects.toMatchObject({
      code: 'workspace-busy',
      message: expect.stringMatching(
        new RegExp(`run "their-run" \\(process ${process.ppid} on .*delete ".*run\\.lock"`),
      ),
    });
    await writeLock(dir, { runId: 'remote-run', pid: 999_999_999, hostname: 'another-host.invalid' });
    await expect(harnessWith('succeed', { workspace: dir }).run(TASK)).rejects.toMatchObject({
      code: 'workspace-busy',
    });
    expect(JSON.parse(await readFile(path.join(dir, LOCK), 'utf8'))).toMatchObject({ runId: 'remote-run' });
  });
});

describe('workspace lifecycle: no writes after a run ends', () => {
  /**
   * A tool that ignores its abort signal and writes once the run has ended (the test says when); `onStart` runs once
   * it is listening for the abort.
   */
  function lateWriter(runEnded: Promise<void>, onStart: () => void = () => undefined) {
    const outcome = gate();
    let writeResult: unknown;
    const tool = defineTool({
      name: 'late_write',
      description: 'Writes late.',
      input: z.object({}),
      timeoutMs: 600_000,
      execute: (_input, ctx) =>
        new Promise<string>(() => {
          ctx.signal.addEventListener('abort', () => {
            void runEnded
              .then(() => ctx.workspace.writeFile('late.txt', 'too late', { tool: 'late_write' }))
              .then(
                (value) => (writeResult = value),
                (error: unknown) => (writeResult = error),
              )
              .finally(outcome.open);
          });
          onStart();
        }),
    });
    return { tool, written: outcome.wait.then(() => writeResult) };
  }

  it.each([
    ['aborted', {}],
    // Long enough for the tool to start on a loaded machine (each step also saves a snapshot): the run must time out
    // while the tool is running, or the late write never happens.
    ['timeout', { limits: { timeoutMs: 1_500 } }],
  ] as const)('refuses a write a tool makes after the run ended (%s)', async (status, options) => {
    const ended = gate();
    const controller = new AbortController();
    const late = lateWriter(ended.wait, status === 'aborted' ? () => controller.abort() : undefined);
    const harness = createHarness({
      backend: new ScriptedBackend({ execute: [toolCall('late_write', {})] }),
      tools: [late.tool],
      workspace: await tempDir(),
      decomposition: false,
      verification: false,
      ...options,
    });
    const result = await harness.run({ task: TASK, signal: controller.signal });
    ended.open();
    expect(result.status).toBe(status);
    expect(await late.written).toMatchObject({
      code: 'workspace-closed',
      message: expect.stringContaining('late.txt'),
    });
    expect(existsSync(path.join(result.workspace, 'late.txt'))).toBe(false);
  });

  it('seals a Workspace the user passed, and never removes it', async () => {
    const ended = gate();
    const controller = new AbortController();
    const late = lateWriter(ended.wait, () => controller.abort());
    const workspace = await LocalWorkspace.create({ dir: await tempDir() });
    const harness = createHarness({
      backend: new ScriptedBackend({ execute: [toolCall('late_write', {})] }),
      tools: [late.tool],
      workspace,
      decomposition: false,
      verification: false,
    });
    const result = await harness.run({ task: TASK, signal: controller.signal });
    ended.open();
    expect(await late.written).toMatchObject({ code: 'workspace-closed' });
    expect(existsSync(path.join(workspace.root, 'late.txt'))).toBe(false);
    expect(await harness.close()).toEqual({ removed: [], kept: [workspace.root] });
    expect(result.workspace).toBe(workspace.root);
    // The user's own handle is not the run's: it still writes.
    await workspace.writeFile('mine.txt', 'ok', { tool: 'user' });
  });
});

async function writeLock(
  dir: string,
  holder: { runId: string; pid: number | undefined; hostname: string },
): Promise<void> {
  await mkdir(path.join(dir, '.harness'), { recursive: true });
  const lock = { ...holder, since: '2020-01-01T00:00:00.000Z', token: `token-${holder.runId}` };
  await fsWriteFile(path.join(dir, LOCK), JSON.stringify(lock));
}

/** Yields to the event loop until `condition` holds (the test's own timeout bounds it). */
async function waitUntil(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}
