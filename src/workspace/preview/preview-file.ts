import { open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULTS } from '../../defaults.js';
import { HarnessError } from '../../errors.js';
import { previewTar, previewZip } from './archive-preview.js';
import { fitChars, formatBytes } from './bounded-text.js';
import { previewDocx } from './docx-preview.js';
import { detectKind, KIND_LABELS, type FileKind } from './file-kind.js';
import type { FormatPreview } from './format-preview.js';
import { previewImage } from './image-preview.js';
import { previewPdf } from './pdf-preview.js';
import { previewPptx } from './pptx-preview.js';
import { previewWorkbook } from './sheet-preview.js';
import { previewDelimited, previewJson, previewText } from './text-preview.js';

/** Options of {@link previewFile}. */
export interface PreviewOptions {
  /**
   * Upper bound of the whole preview, header included.
   * @defaultValue `DEFAULTS.filePreviewChars` (10 000)
   */
  maxChars?: number;
  /** The name shown in the header (e.g. the workspace-relative path); the file's base name when absent. */
  displayName?: string;
}

/** Text files up to this size are read whole (line and row counts); larger ones only from the start. */
const TEXT_SCAN_BYTES = 16 * 1024 * 1024;
/** Documents, workbooks, slides and ZIP archives above this size are not parsed. @internal */
export const PARSE_LIMIT_BYTES = 64 * 1024 * 1024;
const SNIFF_BYTES = 4096;
const MAX_DIRECTORY_ENTRIES = 200;

async function readHead(absPath: string, bytes: number): Promise<Buffer> {
  const handle = await open(absPath, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

function reason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]?.slice(0, 200) ?? 'unknown error';
}

async function previewDirectory(absPath: string, name: string): Promise<string> {
  const entries = await readdir(absPath, { withFileTypes: true });
  entries.sort((a, b) => a.name.localeCompare(b.name));
  const shown = entries
    .slice(0, MAX_DIRECTORY_ENTRIES)
    .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name));
  const more = entries.length > shown.length ? `\n… and ${entries.length - shown.length} more` : '';
  return `${name} (directory, ${entries.length} entries)\n${shown.join('\n')}${more}`;
}

async function readText(absPath: string, size: number, maxChars: number): Promise<{ text: string; complete: boolean }> {
  const complete = size <= TEXT_SCAN_BYTES;
  // Four bytes per character covers any UTF-8 text, so the preview budget is always filled when the file allows.
  const data = await readHead(absPath, complete ? size : Math.min(size, maxChars * 4));
  return { text: data.toString('utf8'), complete };
}

async function readParsable(absPath: string, size: number): Promise<Buffer | undefined> {
  return size > PARSE_LIMIT_BYTES ? undefined : readHead(absPath, size);
}

const TOO_LARGE: FormatPreview = { details: `not parsed: larger than ${formatBytes(PARSE_LIMIT_BYTES)}`, body: '' };

async function previewByKind(kind: FileKind, absPath: string, size: number, maxChars: number): Promise<FormatPreview> {
  switch (kind) {
    case 'text': {
      const { text, complete } = await readText(absPath, size, maxChars);
      return previewText(text, complete);
    }
    case 'json': {
      const { text, complete } = await readText(absPath, size, maxChars);
      return previewJson(text, complete);
    }
    case 'csv':
    case 'tsv': {
      const { text, complete } = await readText(absPath, size, maxChars);
      return previewDelimited(text, complete, kind === 'tsv' ? '\t' : undefined);
    }
    case 'tar':
      return previewTar(absPath);
    case 'gzip':
    case 'unknown':
      return { body: '' };
    case 'pdf': {
      const data = await readParsable(absPath, size);
      return data ? previewPdf(data, maxChars) : TOO_LARGE;
    }
    case 'docx': {
      const data = await readParsable(absPath, size);
      return data ? previewDocx(data) : TOO_LARGE;
    }
    case 'xlsx':
    case 'xls': {
      const data = await readParsable(absPath, size);
      return data ? previewWorkbook(data, maxChars) : TOO_LARGE;
    }
    case 'pptx': {
      const data = await readParsable(absPath, size);
      return data ? previewPptx(data, maxChars) : TOO_LARGE;
    }
    case 'image': {
      const data = await readParsable(absPath, size);
      return data ? previewImage(data) : TOO_LARGE;
    }
    case 'zip': {
      const data = await readParsable(absPath, size);
      return data ? previewZip(data) : TOO_LARGE;
    }
  }
}

/**
 * A bounded, modality-aware preview of any file: a header line (name, type, size, and facts such as pages,
 * sheets or rows) followed by the content a model needs. Never throws for unreadable or unsupported files:
 * they get a one-line preview that says why.
 */
export async function previewFile(absPath: string, options: PreviewOptions = {}): Promise<string> {
  const maxChars = options.maxChars ?? DEFAULTS.filePreviewChars;
  if (!Number.isInteger(maxChars) || maxChars < 1) {
    throw new HarnessError('invalid-options', `maxChars must be a positive integer; got ${String(maxChars)}.`);
  }
  const name = options.displayName ?? path.basename(absPath);
  let size: number;
  try {
    const stats = await stat(absPath);
    if (stats.isDirectory()) return fitChars(await previewDirectory(absPath, name), maxChars);
    if (!stats.isFile()) return fitChars(`${name}: not a regular file, no preview.`, maxChars);
    size = stats.size;
  } catch (error) {
    const missing = typeof error === 'object' && error !== null && 'code' in error && error.code === 'ENOENT';
    return fitChars(missing ? `${name}: does not exist.` : `${name}: cannot be read (${reason(error)}).`, maxChars);
  }
  if (size === 0) return fitChars(`${name}: empty file (0 B).`, maxChars);

  let kind: FileKind = 'unknown';
  try {
    kind = detectKind(name, await readHead(absPath, SNIFF_BYTES));
    if (kind === 'unknown') return fitChars(`${name}: binary file, ${formatBytes(size)}, type unknown.`, maxChars);
    const { details, body } = await previewByKind(kind, absPath, size, maxChars);
    const header = `${name} (${[KIND_LABELS[kind], formatBytes(size), details].filter(Boolean).join(', ')})`;
    const hint = kind === 'text' ? '; read_file with startLine/endLine shows other lines' : '';
    return fitChars(body === '' ? header : `${header}\n${body}`, maxChars, hint);
  } catch (error) {
    return fitChars(
      `${name}: ${KIND_LABELS[kind]}, ${formatBytes(size)}, could not be parsed (${reason(error)}).`,
      maxChars,
    );
  }
}
