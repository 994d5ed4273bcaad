import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editFileTool } from '../../../src/tools/builtin/index.js';
import { LocalWorkspace } from '../../../src/workspace/index.js';
import { makeWorkbook } from '../../workspace/support/make-files.js';
import { invoke, toolContext } from '../../workspace/support/tool-context.js';

let base: string;
let workspace: LocalWorkspace;

const read = (name: string): Promise<string> => readFile(path.join(workspace.root, name), 'utf8');

beforeEach(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'edit-file-'));
  workspace = await LocalWorkspace.create({ dir: path.join(base, 'ws'), now: () => 5 });
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('edit_file', () => {
  it('replaces a unique match, records the artifact and shows the edited lines', async () => {
    await workspace.writeFile('report.md', '# Title\n\nRevenue: 10\nCosts: 4\n', { tool: 'write_to_file' });
    const result = await invoke(
      editFileTool(),
      { path: 'report.md', search: 'Revenue: 10', replace: 'Revenue: 12' },
      toolContext(workspace, { scope: 'repair-1' }),
    );
    expect(result.isError).toBe(false);
    expect(result.text).toContain('Edited report.md: replaced 1 occurrence (line 3)');
    expect(result.text).toContain('3| Revenue: 12');
    expect(result.files).toEqual(['report.md']);
    expect(await read('report.md')).toBe('# Title\n\nRevenue: 12\nCosts: 4\n');
    expect(workspace.artifacts().at(-1)).toMatchObject({ path: 'report.md', tool: 'edit_file', scope: 'repair-1' });
  });

  it('inserts replacement text literally, "$&" and "$1" included', async () => {
    await workspace.writeFile('price.txt', 'price: X\n', { tool: 't' });
    await invoke(editFileTool(), { path: 'price.txt', search: 'X', replace: '$& costs $1' }, toolContext(workspace));
    expect(await read('price.txt')).toBe('price: $& costs $1\n');
  });

  it('writes nothing on zero matches and shows the lines that resemble the search text', async () => {
    const original = 'def total(items):\n    return sum(items)\n\nprint(total([1, 2]))\n';
    await workspace.writeFile('calc.py', original, { tool: 't' });
    const before = workspace.artifacts();
    const result = await invoke(
      editFileTool(),
      { path: 'calc.py', search: 'def total(items):\n  return sum(items)', replace: 'x' },
      toolContext(workspace),
    );
    expect(result.isError).toBe(true);
    expect(result.text).toContain('found 0 times in "calc.py"; nothing was written');
    expect(result.text).toContain('1| def total(items):');
    expect(result.text).toContain('2|     return sum(items)');
    expect(await read('calc.py')).toBe(original);
    expect(workspace.artifacts()).toEqual(before);
  });

  it('says so when not even the first line occurs', async () => {
    await workspace.writeFile('a.txt', 'alpha\n', { tool: 't' });
    const result = await invoke(
      editFileTool(),
      { path: 'a.txt', search: 'omega', replace: 'x' },
      toolContext(workspace),
    );
    expect(result.text).toContain('Not even its first line occurs');
  });

  it('writes nothing on several matches and lists their lines with context', async () => {
    const original = 'total = 1\nother\ntotal = 1\nmore\ntotal = 1\n';
    await workspace.writeFile('v.txt', original, { tool: 't' });
    const result = await invoke(
      editFileTool(),
      { path: 'v.txt', search: 'total = 1', replace: 'total = 2' },
      toolContext(workspace),
    );
    expect(result.isError).toBe(true);
    expect(result.text).toContain('found 3 times in "v.txt" (lines 1, 3, 5); nothing was written');
    expect(result.text).toContain('set replaceAll to true');
    expect(result.text).toContain('4| more');
    expect(await read('v.txt')).toBe(original);
  });

  it('replaces every occurrence with replaceAll', async () => {
    await workspace.writeFile('v.txt', 'a-a-a', { tool: 't' });
    const result = await invoke(
      editFileTool(),
      { path: 'v.txt', search: 'a', replace: 'bb', replaceAll: true },
      toolContext(workspace),
    );
    expect(result.text).toContain('replaced 3 occurrences');
    expect(await read('v.txt')).toBe('bb-bb-bb');
  });

  it('matches a search written with \\n against a file with CRLF line endings, keeping CRLF', async () => {
    await workspace.writeFile('win.txt', 'one\r\ntwo\r\nthree\r\n', { tool: 't' });
    const result = await invoke(
      editFileTool(),
      { path: 'win.txt', search: 'one\ntwo', replace: 'uno\ndos' },
      toolContext(workspace),
    );
    expect(result.isError).toBe(false);
    expect(await read('win.txt')).toBe('uno\r\ndos\r\nthree\r\n');
  });

  it('refuses binary files, missing files and paths outside', async () => {
    await workspace.writeFile('book.xlsx', makeWorkbook({ S: [['a']] }), { tool: 't' });
    const binary = await invoke(
      editFileTool(),
      { path: 'book.xlsx', search: 'a', replace: 'b' },
      toolContext(workspace),
    );
    expect(binary.text).toContain('not a text file');
    const missing = await invoke(
      editFileTool(),
      { path: 'none.txt', search: 'a', replace: 'b' },
      toolContext(workspace),
    );
    expect(missing.text).toContain('"none.txt" does not exist in the workspace');
    const outside = await invoke(
      editFileTool(),
      { path: '../x.txt', search: 'a', replace: 'b' },
      toolContext(workspace),
    );
    expect(outside.isError).toBe(true);
    expect(outside.text).toContain('Refused path "../x.txt"');
  });

  it('rejects an empty search text through the schema', async () => {
    await workspace.writeFile('a.txt', 'abc', { tool: 't' });
    const result = await invoke(editFileTool(), { path: 'a.txt', search: '', replace: 'x' }, toolContext(workspace));
    expect(result.isError).toBe(true);
    expect(await read('a.txt')).toBe('abc');
  });
});
