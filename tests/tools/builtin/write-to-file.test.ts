import { mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeToFileTool } from '../../../src/tools/builtin/index.js';
import { LocalWorkspace } from '../../../src/workspace/index.js';
import { invoke, toolContext } from '../../workspace/support/tool-context.js';

let base: string;
let workspace: LocalWorkspace;

beforeEach(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'write-file-'));
  workspace = await LocalWorkspace.create({ dir: path.join(base, 'ws') });
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('write_to_file', () => {
  it('is not read-only', () => {
    expect(writeToFileTool().readOnly).toBe(false);
  });

  it('creates directories, writes the content and records the artifact with the scope', async () => {
    const result = await invoke(
      writeToFileTool(),
      { path: 'out/report.md', content: '# Report\n' },
      toolContext(workspace, { scope: 'subtask-3' }),
    );
    expect(result.isError).toBe(false);
    expect(result.text).toBe('Created out/report.md (9 B).');
    expect(result.files).toEqual(['out/report.md']);
    expect(await readFile(path.join(workspace.root, 'out/report.md'), 'utf8')).toBe('# Report\n');
    expect(workspace.artifacts()).toMatchObject([{ path: 'out/report.md', tool: 'write_to_file', scope: 'subtask-3' }]);
  });

  it('overwrites an existing file and says so', async () => {
    await invoke(writeToFileTool(), { path: 'a.txt', content: 'one' }, toolContext(workspace));
    const result = await invoke(writeToFileTool(), { path: 'a.txt', content: 'two' }, toolContext(workspace));
    expect(result.text).toBe('Overwrote a.txt (3 B).');
    expect(await readFile(path.join(workspace.root, 'a.txt'), 'utf8')).toBe('two');
  });

  it('refuses to write outside, leaving the outside untouched', async () => {
    await symlink(base, path.join(workspace.root, 'up'));
    const before = await readdir(base);
    for (const target of ['../escape.txt', 'up/escape.txt', path.join(base, 'escape.txt')]) {
      const result = await invoke(writeToFileTool(), { path: target, content: 'x' }, toolContext(workspace));
      expect(result.isError).toBe(true);
      expect(result.text).toMatch(/Refused path .*(\.\.|absolute|symbolic link)/);
    }
    expect(await readdir(base)).toEqual(before);
    expect(workspace.artifacts()).toEqual([]);
  });

  it('rejects a call without content through the schema', async () => {
    const result = await invoke(writeToFileTool(), { path: 'a.txt' }, toolContext(workspace));
    expect(result.isError).toBe(true);
    expect(result.text).toContain('content');
  });
});
