import { link, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryManager } from '../../src/memory/memory-manager.js';
import { PASSED_ANSWER_CHARS, saveLongAnswer } from '../../src/handoff/answers.js';
import { LocalWorkspace } from '../../src/workspace/index.js';
import { deterministicText, fakeBackend, invocation, scopeFor } from '../memory/helpers.js';

let base: string;
let outside: string;
let dir: string;

beforeEach(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'ws-harness-writes-'));
  outside = path.join(base, 'outside');
  dir = path.join(base, 'ws');
  await mkdir(outside);
  await writeFile(path.join(outside, '.bashrc'), 'export CANARY=1\n');
  await writeFile(path.join(outside, 'answers.md'), 'canary answer\n');
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

/**
 * What sandboxed Python did in the adversarial trial (`os.symlink('/root/.bashrc', '.harness/outputs/subtask-1.txt')`),
 * then the harness's own writes of that step: the memory saves the full tool output, the pipeline a long answer.
 */
async function plantThenSave(links: Record<string, string>): Promise<string[]> {
  const workspace = await LocalWorkspace.create({ dir });
  try {
    for (const [at, target] of Object.entries(links)) {
      await mkdir(path.dirname(path.join(workspace.root, at)), { recursive: true });
      await symlink(target, path.join(workspace.root, at));
    }
    const scope = scopeFor(fakeBackend(32_000), workspace);
    await new MemoryManager().boundObservation(invocation(deterministicText(1, 20_000)), scope);
    const long = 'A long answer. '.repeat(Math.ceil(PASSED_ANSWER_CHARS / 10));
    await saveLongAnswer(workspace, 'subtask-1', long, { runId: 'run-1', emit: (event) => scope.emit(event) });
    return scope.events.filter((e) => e.type === 'run-warning').map((e) => (e as { code: string }).code);
  } finally {
    await workspace.dispose();
  }
}

async function expectOutsideUntouched(): Promise<void> {
  expect((await readdir(outside)).sort()).toEqual(['.bashrc', 'answers.md']);
  expect(await readFile(path.join(outside, '.bashrc'), 'utf8')).toBe('export CANARY=1\n');
  expect(await readFile(path.join(outside, 'answers.md'), 'utf8')).toBe('canary answer\n');
}

describe("the harness's own files never land outside through links planted in the workspace (issue #13)", () => {
  it('a link as the memory log or the saved answer: the outside files keep their bytes, the saves warn', async () => {
    const warnings = await plantThenSave({
      '.harness/outputs/subtask-1.txt': path.join(outside, '.bashrc'),
      '.harness/answers/subtask-1.md': path.join(outside, 'answers.md'),
    });
    await expectOutsideUntouched();
    expect(warnings).toContain('output-save-failed');
    expect(warnings).toContain('answer-save-failed');
  });

  it('a hard link to an outside file as the memory log: the append is refused, the outside file keeps its bytes', async () => {
    await mkdir(path.join(dir, '.harness/outputs'), { recursive: true });
    await link(path.join(outside, '.bashrc'), path.join(dir, '.harness/outputs/subtask-1.txt'));
    const warnings = await plantThenSave({});
    await expectOutsideUntouched();
    expect(warnings).toEqual(['output-save-failed']);
  });

  it('a hard link made while the log is kept open between appends: the next append is refused', async () => {
    const workspace = await LocalWorkspace.create({ dir });
    try {
      await workspace.appendFile('.harness/outputs/subtask-1.txt', 'first\n', { tool: 'harness' });
      await rm(path.join(outside, '.bashrc'));
      await link(path.join(workspace.root, '.harness/outputs/subtask-1.txt'), path.join(outside, '.bashrc'));
      const error = await workspace
        .appendFile('.harness/outputs/subtask-1.txt', 'second\n', { tool: 'harness' })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'invalid-input' });
      expect((error as Error).message).toContain('has other hard links');
      expect(await readFile(path.join(outside, '.bashrc'), 'utf8')).toBe('first\n');
    } finally {
      await workspace.dispose();
    }
  });

  it('a link as the .harness directory or its outputs and answers directories', async () => {
    await plantThenSave({ '.harness/outputs': outside, '.harness/answers': outside });
    await expectOutsideUntouched();
    await rm(dir, { recursive: true, force: true });
    await plantThenSave({ '.harness': outside });
    await expectOutsideUntouched();
  });
});
