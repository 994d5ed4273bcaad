import { z } from 'zod';
import { HarnessError } from '../../errors.js';
import { detectKind } from '../../workspace/preview/file-kind.js';
import { defineTool } from '../define-tool.js';
import type { Tool } from '../types.js';

const EditFileInput = z.object({
  path: z.string().min(1).describe('Workspace-relative path of an existing text file.'),
  search: z
    .string()
    .min(1)
    .describe('The exact text to replace, copied from the file (whitespace and line breaks included).'),
  replace: z.string().describe('The text to put in its place.'),
  replaceAll: z
    .boolean()
    .optional()
    .describe('Replace every occurrence. Without it the search text must occur exactly once.'),
});

const MAX_LOCATIONS = 3;
const CONTEXT_LINES = 2;

function occurrences(text: string, search: string): number[] {
  const found: number[] = [];
  for (let index = text.indexOf(search); index !== -1; index = text.indexOf(search, index + search.length)) {
    found.push(index);
  }
  return found;
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let index = text.indexOf('\n'); index !== -1 && index < offset; index = text.indexOf('\n', index + 1)) line += 1;
  return line;
}

/** Numbered lines around `line` (1-based), the form models can copy exact text from. */
function excerpt(lines: readonly string[], line: number, span = 1): string {
  const from = Math.max(1, line - CONTEXT_LINES);
  const to = Math.min(lines.length, line + span - 1 + CONTEXT_LINES);
  const width = String(to).length;
  const shown: string[] = [];
  for (let number = from; number <= to; number += 1) {
    shown.push(`${String(number).padStart(width)}| ${lines[number - 1] ?? ''}`);
  }
  return shown.join('\n');
}

/** Lines whose trimmed text contains the search text's first non-blank line: where the model probably meant. */
function nearMisses(lines: readonly string[], search: string): number[] {
  const probe = search
    .split(/\r?\n/)
    .find((line) => line.trim() !== '')
    ?.trim();
  if (!probe) return [];
  const collapse = (value: string): string => value.replace(/\s+/g, ' ');
  const wanted = collapse(probe);
  const found: number[] = [];
  for (const [index, line] of lines.entries()) {
    if (collapse(line).includes(wanted)) found.push(index + 1);
    if (found.length === MAX_LOCATIONS) break;
  }
  return found;
}

/**
 * `edit_file`: exact search-and-replace in a workspace text file. Zero or several matches (without `replaceAll`)
 * change nothing and come back with the count and the nearby lines, so the model can retry precisely.
 */
export function editFileTool(): Tool<z.output<typeof EditFileInput>> {
  return defineTool({
    name: 'edit_file',
    description:
      'Edit a text file in the workspace by exact search and replace. The search text must match the file exactly ' +
      'and occur once (or set replaceAll). When it does not match, nothing is written and the nearby lines are shown.',
    input: EditFileInput,
    readOnly: false,
    observation: 'text',
    async execute({ path, search, replace, replaceAll }, { workspace, scope }) {
      const data = await workspace.readFile(path);
      const kind = detectKind(path, data.subarray(0, 4096));
      if (!['text', 'json', 'csv', 'tsv'].includes(kind)) {
        throw new HarnessError('invalid-input', `"${path}" is not a text file; edit_file changes text files only.`);
      }
      const text = data.toString('utf8');
      let needle = search;
      let replacement = replace;
      let found = occurrences(text, needle);
      // Models write "\n"; a Windows file has "\r\n". Matching the file's line endings is still an exact match.
      if (found.length === 0 && text.includes('\r\n') && /(?<!\r)\n/.test(search)) {
        needle = search.replace(/\r?\n/g, '\r\n');
        replacement = replace.replace(/\r?\n/g, '\r\n');
        found = occurrences(text, needle);
      }
      const lines = text.split(/\r?\n/);
      const span = needle.split(/\r?\n/).length;
      if (found.length === 0) {
        const candidates = nearMisses(lines, search);
        const hint =
          candidates.length > 0
            ? `Lines that resemble its first line:\n${candidates.map((line) => excerpt(lines, line)).join('\n…\n')}\n` +
              'Copy the exact text (without the line numbers) from here or from read_file and try again.'
            : 'Not even its first line occurs. Read the file again with read_file and copy the exact text.';
        throw new HarnessError(
          'invalid-input',
          `The search text was found 0 times in "${path}"; nothing was written. ${hint}`,
        );
      }
      const at = found.map((offset) => lineOf(text, offset));
      if (found.length > 1 && replaceAll !== true) {
        const shown = at.slice(0, MAX_LOCATIONS).map((line) => excerpt(lines, line, span));
        throw new HarnessError(
          'invalid-input',
          `The search text was found ${found.length} times in "${path}" (lines ${at.join(', ')}); nothing was written. ` +
            'Include more surrounding lines so it matches exactly once, or set replaceAll to true.\n' +
            shown.join('\n…\n'),
        );
      }
      const updated = text.split(needle).join(replacement);
      const record = await workspace.writeFile(path, updated, { tool: 'edit_file', scope });
      const firstLine = at[0] ?? 1;
      const after = excerpt(updated.split(/\r?\n/), firstLine, replacement.split(/\r?\n/).length);
      const count = found.length === 1 ? '1 occurrence' : `${found.length} occurrences`;
      return {
        text: `Edited ${record.path}: replaced ${count} (${at.length === 1 ? 'line' : 'lines'} ${at.join(', ')}). Now:\n${after}`,
        files: [record.path],
      };
    },
  });
}
