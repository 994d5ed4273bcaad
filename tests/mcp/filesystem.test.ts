import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ToolRegistry } from '../../src/tools/registry.js';
import { callOf, FILESYSTEM_BIN, open, tempDir, toolContext } from './helpers.js';

/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

describe('mcpTools with server-filesystem', () => {
  it('marks its read tools read-only and its write tools not, from the readOnlyHint annotations', async () => {
    const dir = await tempDir();
    const set = await open({ command: FILESYSTEM_BIN, args: [dir] }, { prefix: 'fs_' });
    const readOnly = Object.fromEntries(set.tools.map((tool) => [tool.name, tool.readOnly]));
    expect(readOnly).toMatchObject({
      fs_read_text_file: true,
      fs_list_directory: true,
      fs_search_files: true,
      fs_write_file: false,
      fs_edit_file: false,
      fs_move_file: false,
      fs_create_directory: false,
    });
  });

  it('reads and writes files of the served directory', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'notes.txt'), 'remember the milk\n');
    const set = await open({ command: FILESYSTEM_BIN, args: [dir] }, { prefix: 'fs_' });
    const registry = new ToolRegistry([...set.tools]);

    const read = await registry.invoke(
      callOf('fs_read_text_file', { path: path.join(dir, 'notes.txt') }),
      toolContext(),
    );
    expect(read.isError).toBe(false);
    expect(read.text).toContain('remember the milk');

    const write = await registry.invoke(
      callOf('fs_write_file', { path: path.join(dir, 'out.md'), content: '# Out' }),
      toolContext(),
    );
    expect(write.isError).toBe(false);
    expect(await readFile(path.join(dir, 'out.md'), 'utf8')).toBe('# Out');

    const outside = await registry.invoke(callOf('fs_read_text_file', { path: '/etc/hostname' }), toolContext());
    expect(outside.isError).toBe(true);
    expect(outside.text).toMatch(/^Tool "fs_read_text_file" failed: .*(denied|outside)/is);
  });

  it('returns a media file as an image part', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'dot.png'), PNG);
    const set = await open({ command: FILESYSTEM_BIN, args: [dir] });
    const result = await new ToolRegistry([...set.tools]).invoke(
      callOf('read_media_file', { path: path.join(dir, 'dot.png') }),
      toolContext(),
    );
    expect(result.isError).toBe(false);
    expect(result.images).toEqual([{ type: 'image', data: PNG.toString('base64'), mediaType: 'image/png' }]);
  });
});
