/**
 * `list_files`: a read-only listing of the workspace, so an auditor can find what to check without a shell.
 * @module
 */
import { lstat } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool } from '../../tools/define-tool.js';
import type { Tool } from '../../tools/types.js';
import { walkWorkspace } from './workspace-walk.js';

/** Entries one listing shows at most; the rest is counted. */
const MAX_ENTRIES = 500;

const ListFilesInput = z.object({
  path: z.string().min(1).default('.').describe('Workspace-relative directory to list (default: the workspace root).'),
});

/**
 * `list_files`: every file under a workspace directory with its size in bytes (directories end in `/`; symbolic links, never
 * followed, and other non-files are marked), at most 500 entries; the harness's `.harness/` folder is left out. Read-only.
 */
export function listFilesTool(): Tool<z.output<typeof ListFilesInput>> {
  return defineTool({
    name: 'list_files',
    description:
      'List the files under a workspace directory (recursively) with their sizes in bytes. Read-only. ' +
      'Use it to find what to inspect, then read_file the files.',
    input: ListFilesInput,
    readOnly: true,
    observation: 'text',
    async execute({ path }, { workspace }) {
      const dir = await workspace.resolve(path, 'read');
      const lines: string[] = [];
      let total = 0;
      for await (const entry of walkWorkspace(workspace.root, dir)) {
        total += 1;
        if (lines.length >= MAX_ENTRIES) continue;
        if (entry.kind === 'directory') lines.push(`${entry.path}/`);
        else if (entry.kind === 'file')
          lines.push(`${entry.path}  (${(await lstat(entry.absolute).catch(() => undefined))?.size ?? '?'} bytes)`);
        else lines.push(`${entry.path}  (${entry.kind === 'symlink' ? 'symbolic link' : 'not a regular file'})`);
      }
      if (total === 0) return `${path}: no files.`;
      const more = total > lines.length ? `\n… and ${total - lines.length} more entries` : '';
      return `${lines.join('\n')}${more}`;
    },
  });
}
