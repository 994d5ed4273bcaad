/**
 * A minimal file-writing tool for the examples.
 * @module
 */
import { z } from 'zod';
import { defineTool } from '../../src/index.js';

/** Writes a text file into the run's workspace (a stand-in for the built-in write_to_file). */
export const writeToFile = defineTool({
  name: 'write_to_file',
  description: 'Create or overwrite a text file in the workspace with the complete content given.',
  input: z.object({
    path: z.string().min(1).describe('Workspace-relative path, e.g. "report.md".'),
    content: z.string().describe('The complete file content.'),
  }),
  execute: async ({ path, content }, ctx) => {
    await ctx.workspace.writeFile(path, content, { tool: 'write_to_file', scope: ctx.scope });
    return { text: `Wrote ${content.length} characters to ${path}.`, files: [path] };
  },
});
