import { mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HarnessError } from '../../src/errors.js';
import type { MemoryScope } from '../../src/memory/types.js';
import { OutputLog } from '../../src/memory/output-log.js';
import { saveLongAnswer, PASSED_ANSWER_CHARS } from '../../src/handoff/answers.js';
import { writeToFileTool } from '../../src/tools/builtin/write-to-file.js';
import type { ToolInvocation } from '../../src/tools/types.js';
import { LocalWorkspace } from '../../src/workspace/index.js';
import { race, RACE_TARGETS } from './support/race.js';
import { invoke, toolContext } from './support/tool-context.js';

let base: string;
let outside: string;
let workspace: LocalWorkspace;

beforeEach(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'ws-race-'));
  outside = path.join(base, 'outside');
  await mkdir(outside);
  await writeFile(path.join(outside, 'canary.txt'), 'canary');
  workspace = await LocalWorkspace.create({ dir: path.join(base, 'ws') });
});

afterEach(async () => {
  await workspace.dispose();
  await rm(base, { recursive: true, force: true });
});

function memoryScope(scope: string): MemoryScope {
  return { runId: 'run-race', scope, purpose: 'execute', workspace, emit: () => undefined } as unknown as MemoryScope;
}

function toolOutput(n: number): ToolInvocation {
  return {
    callId: `call-${n}`,
    toolName: 'python_interpreter',
    text: `output ${n}\n`,
    files: [],
    images: [],
    isError: false,
    observation: 'text',
    durationMs: 1,
  };
}

describe('writes while a directory is swapped for a link to the outside (issue #13)', () => {
  it.runIf(process.platform === 'linux')(
    'land nothing outside the workspace: writes, appends, mkdirs, copyIn, write_to_file, memory log, saved answers',
    async () => {
      const source = path.join(base, 'attachment.bin');
      await writeFile(source, 'attachment bytes');
      await mkdir(path.join(workspace.root, 'd'));
      await mkdir(path.join(workspace.root, '.harness/outputs'), { recursive: true });
      await mkdir(path.join(workspace.root, '.harness/answers'), { recursive: true });
      const context = toolContext(workspace);
      const tool = writeToFileTool();
      const log = new OutputLog(false);
      const longAnswer = 'a'.repeat(PASSED_ANSWER_CHARS + 1);
      const origin = { tool: 'race' };

      const targets = ['d', '.harness/outputs', '.harness/answers'].map((t) => path.join(workspace.root, t));
      const { attempts, swaps, landed } = await race(outside, targets, [
        (n) => workspace.writeFile(`d/write-${n}.txt`, `write ${n}`, origin),
        (n) => workspace.writeFile('d/canary.txt', `overwrite ${n}`, origin),
        (n) => workspace.writeFile(`d/new-${n}/deeper/file.txt`, `mkdir ${n}`, origin),
        (n) => workspace.appendFile(`d/append-${n % 7}.txt`, `append ${n}\n`, origin),
        (n) => workspace.appendFile('d/canary.txt', `append ${n}\n`, origin),
        (n) => workspace.copyIn(source, `d/attachment-${n}.bin`),
        (n) => invoke(tool, { path: `d/tool-${n}.md`, content: `tool ${n}` }, context),
        (n) => log.save(toolOutput(n), memoryScope(`subtask-${n % 3}`)),
        (n) => saveLongAnswer(workspace, `subtask-${n % 3}`, longAnswer, { runId: 'run-race' }),
      ]);

      expect(await readdir(outside, { recursive: true })).toEqual(['canary.txt']);
      expect(await readFile(path.join(outside, 'canary.txt'), 'utf8')).toBe('canary');
      // The race was real: thousands of writes against thousands of swaps, and writes did land inside.
      expect(attempts).toBeGreaterThanOrEqual(RACE_TARGETS.attempts);
      expect(swaps).toBeGreaterThanOrEqual(RACE_TARGETS.swaps);
      expect(landed).toBeGreaterThanOrEqual(RACE_TARGETS.landed);
    },
    // The race runs to counts; this is only the bound on a hang.
    300_000,
  );
});

describe('a directory swapped for a link right after the path was checked (issue #13)', () => {
  /** Makes every later check of a path be followed at once by the swap the racing process times by chance. */
  async function swapAfterEachCheck(): Promise<void> {
    await mkdir(path.join(workspace.root, 'd'));
    await writeFile(path.join(workspace.root, 'd/notes.txt'), 'inside');
    await writeFile(path.join(outside, 'notes.txt'), 'outside secret');
    const check = workspace.resolve.bind(workspace);
    let parked = 0;
    workspace.resolve = async (requested, intent) => {
      const resolved = await check(requested, intent);
      await rename(path.join(workspace.root, 'd'), path.join(workspace.root, `parked-${parked++}`));
      await symlink(outside, path.join(workspace.root, 'd'));
      return resolved;
    };
  }

  async function expectLinkRefused(operation: Promise<unknown>): Promise<void> {
    const error = await operation.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(HarnessError.isInstance(error), `expected a refusal, got ${String(error)}`).toBe(true);
    expect(error).toMatchObject({ code: 'path-outside-workspace' });
    expect((error as Error).message).toContain('"d" is a symbolic link (or became one while in use)');
    await rm(path.join(workspace.root, 'd'));
    await mkdir(path.join(workspace.root, 'd'));
  }

  it.runIf(process.platform === 'linux')(
    'writes, appends, copies, reads and previews refuse it, touching nothing outside',
    async () => {
      await swapAfterEachCheck();
      await writeFile(path.join(base, 'attachment.bin'), 'attachment');
      await expectLinkRefused(workspace.writeFile('d/new.txt', 'x', { tool: 't' }));
      await expectLinkRefused(workspace.writeFile('d/notes.txt', 'overwrite', { tool: 't' }));
      await expectLinkRefused(workspace.writeFile('d/sub/deeper.txt', 'x', { tool: 't' }));
      await expectLinkRefused(workspace.appendFile('d/log.txt', 'x', { tool: 't' }));
      await expectLinkRefused(workspace.appendFile('d/notes.txt', 'x', { tool: 't' }));
      await expectLinkRefused(workspace.copyIn(path.join(base, 'attachment.bin'), 'd/attachment.bin'));
      await expectLinkRefused(workspace.readFile('d/notes.txt'));
      await expectLinkRefused(workspace.preview('d/notes.txt'));
      expect((await readdir(outside)).sort()).toEqual(['canary.txt', 'notes.txt']);
      expect(await readFile(path.join(outside, 'notes.txt'), 'utf8')).toBe('outside secret');
      expect(await readFile(path.join(outside, 'canary.txt'), 'utf8')).toBe('canary');
      expect(workspace.artifacts()).toEqual([]);
    },
  );
});
