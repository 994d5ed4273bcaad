import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileTool } from '../../../src/tools/builtin/index.js';
import { LocalWorkspace } from '../../../src/workspace/index.js';
import { makeWorkbook } from '../../workspace/support/make-files.js';
import { invoke, toolContext } from '../../workspace/support/tool-context.js';

let base: string;
let workspace: LocalWorkspace;

beforeEach(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'read-file-'));
  workspace = await LocalWorkspace.create({ dir: path.join(base, 'ws') });
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('read_file', () => {
  it('is a read-only file observation tool', () => {
    const tool = readFileTool();
    expect(tool.name).toBe('read_file');
    expect(tool.readOnly).toBe(true);
    expect(tool.observation).toBe('file');
  });

  it('returns the modality-aware preview of a file', async () => {
    await workspace.writeFile(
      'attachments/sales.xlsx',
      makeWorkbook({
        Q1: [
          ['region', 'revenue'],
          ['north', 120],
        ],
      }),
      {
        tool: 'test',
      },
    );
    const result = await invoke(readFileTool(), { path: 'attachments/sales.xlsx' }, toolContext(workspace));
    expect(result.isError).toBe(false);
    expect(result.observation).toBe('file');
    expect(result.text).toContain('attachments/sales.xlsx (XLSX spreadsheet');
    expect(result.text).toContain('| north | 120 |');
  });

  it('bounds the preview by maxChars', async () => {
    await workspace.writeFile('big.txt', 'word '.repeat(10_000), { tool: 'test' });
    const result = await invoke(readFileTool({ maxChars: 500 }), { path: 'big.txt' }, toolContext(workspace));
    expect(result.text.length).toBeLessThanOrEqual(500);
    expect(result.text).toContain('truncated');
  });

  it('reads a line range of a text file', async () => {
    const text = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
    await workspace.writeFile('notes.txt', text, { tool: 'test' });
    const result = await invoke(
      readFileTool(),
      { path: 'notes.txt', startLine: 10, endLine: 12 },
      toolContext(workspace),
    );
    expect(result.text).toBe('notes.txt (lines 10–12 of 30)\nline 10\nline 11\nline 12');
    const tail = await invoke(readFileTool(), { path: 'notes.txt', startLine: 29 }, toolContext(workspace));
    expect(tail.text).toBe('notes.txt (lines 29–30 of 30)\nline 29\nline 30');
  });

  it('explains a range past the end, a reversed range and a range on a binary file', async () => {
    await workspace.writeFile('short.txt', 'one\ntwo\n', { tool: 'test' });
    const past = await invoke(readFileTool(), { path: 'short.txt', startLine: 5 }, toolContext(workspace));
    expect(past.isError).toBe(true);
    expect(past.text).toContain('"short.txt" has 2 lines; startLine 5 is past the end');
    const reversed = await invoke(
      readFileTool(),
      { path: 'short.txt', startLine: 2, endLine: 1 },
      toolContext(workspace),
    );
    expect(reversed.isError).toBe(true);
    expect(reversed.text).toContain('endLine must not be smaller than startLine');
    await workspace.writeFile('book.xlsx', makeWorkbook({ S: [['a']] }), { tool: 'test' });
    const binary = await invoke(readFileTool(), { path: 'book.xlsx', startLine: 1 }, toolContext(workspace));
    expect(binary.isError).toBe(true);
    expect(binary.text).toContain('not a text file');
  });

  it('refuses paths outside the workspace with an observation that says why', async () => {
    await writeFile(path.join(base, 'secret.txt'), 'secret');
    await symlink(path.join(base, 'secret.txt'), path.join(workspace.root, 'link.txt'));
    for (const [target, why] of [
      ['../secret.txt', '".." segments are not allowed'],
      [path.join(base, 'secret.txt'), 'absolute paths are not allowed'],
      ['link.txt', 'symbolic link that points outside'],
    ] as const) {
      const result = await invoke(readFileTool(), { path: target }, toolContext(workspace));
      expect(result.isError).toBe(true);
      expect(result.text).toContain(why);
      expect(result.text).not.toContain('secret\n');
    }
  });

  it('says a missing file does not exist', async () => {
    const result = await invoke(readFileTool(), { path: 'nope.md' }, toolContext(workspace));
    expect(result.text).toBe('nope.md: does not exist.');
  });
});
