import { z } from 'zod';
import { DEFAULTS } from '../../defaults.js';
import { HarnessError } from '../../errors.js';
import { fitChars, formatCount } from '../../workspace/preview/bounded-text.js';
import { detectKind } from '../../workspace/preview/file-kind.js';
import { defineTool } from '../define-tool.js';
import type { Tool } from '../types.js';

/** Options of {@link readFileTool}. */
export interface ReadFileToolOptions {
  /** Bound of one read; the workspace's preview size (10 000 characters by default) when absent. */
  maxChars?: number;
}

const ReadFileInput = z
  .object({
    path: z.string().min(1).describe('Workspace-relative path of the file, e.g. "attachments/data.xlsx".'),
    startLine: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('Text files only: first line to show (1-based). Omit for a preview of the whole file.'),
    endLine: z.number().int().min(1).optional().describe('Text files only: last line to show (inclusive).'),
  })
  .refine((input) => input.startLine === undefined || input.endLine === undefined || input.endLine >= input.startLine, {
    message: 'endLine must not be smaller than startLine',
    path: ['endLine'],
  });

const TEXT_KINDS = new Set(['text', 'json', 'csv', 'tsv']);

/**
 * `read_file`: a bounded, modality-aware preview of a workspace file (text, JSON, CSV, PDF, Word, Excel,
 * PowerPoint, images, archives), or a line range of a text file.
 */
export function readFileTool(options: ReadFileToolOptions = {}): Tool<z.output<typeof ReadFileInput>> {
  return defineTool({
    name: 'read_file',
    description:
      'Read a file in the workspace. Returns a bounded preview that depends on the file type: text and code, ' +
      'JSON (pretty-printed), CSV/TSV (columns, row count, first rows), PDF (text per page), DOCX (text), ' +
      'XLSX/XLS (sheets, dimensions, first rows), PPTX (text per slide), images (type and size), archives (listing). ' +
      'For long text files, pass startLine/endLine to read a specific range of lines.',
    input: ReadFileInput,
    readOnly: true,
    observation: 'file',
    async execute({ path, startLine, endLine }, { workspace }) {
      if (startLine === undefined && endLine === undefined) {
        return workspace.preview(path, options.maxChars === undefined ? {} : { maxChars: options.maxChars });
      }
      const data = await workspace.readFile(path);
      const kind = detectKind(path, data.subarray(0, 4096));
      if (!TEXT_KINDS.has(kind)) {
        throw new HarnessError(
          'invalid-input',
          `"${path}" is not a text file, so line ranges do not apply. Call read_file without startLine/endLine for its preview.`,
        );
      }
      const lines = data.toString('utf8').split(/\r?\n/);
      if (lines.at(-1) === '') lines.pop();
      const first = startLine ?? 1;
      if (first > lines.length) {
        throw new HarnessError(
          'invalid-input',
          `"${path}" has ${formatCount(lines.length)} lines; startLine ${first} is past the end.`,
        );
      }
      const last = Math.min(endLine ?? lines.length, lines.length);
      const header = `${path} (lines ${first}–${last} of ${formatCount(lines.length)})`;
      const maxChars = options.maxChars ?? DEFAULTS.filePreviewChars;
      return fitChars(`${header}\n${lines.slice(first - 1, last).join('\n')}`, maxChars, '; request a smaller range');
    },
  });
}
