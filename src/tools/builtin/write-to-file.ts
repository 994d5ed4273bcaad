import { z } from 'zod';
import { formatBytes } from '../../workspace/preview/bounded-text.js';
import { defineTool } from '../define-tool.js';
import type { Tool } from '../types.js';

const WriteToFileInput = z.object({
  path: z.string().min(1).describe('Workspace-relative path of the file to create or overwrite, e.g. "report.md".'),
  content: z.string().describe('The complete new content of the file.'),
});

/** `write_to_file`: writes a whole text file in the workspace (creating directories) and records it as an artifact. */
export function writeToFileTool(): Tool<z.output<typeof WriteToFileInput>> {
  return defineTool({
    name: 'write_to_file',
    description:
      'Create or overwrite a text file in the workspace with the full content given. Parent directories are ' +
      'created. Use edit_file to change part of an existing file.',
    input: WriteToFileInput,
    readOnly: false,
    observation: 'text',
    async execute({ path, content }, { workspace, scope }) {
      const existed = await workspace.exists(path);
      const record = await workspace.writeFile(path, content, { tool: 'write_to_file', scope });
      return {
        text: `${existed ? 'Overwrote' : 'Created'} ${record.path} (${formatBytes(record.size)}).`,
        files: [record.path],
      };
    },
  });
}
