import path from 'node:path';

/** The families of files the previewer knows. */
export type FileKind =
  | 'text'
  | 'json'
  | 'csv'
  | 'tsv'
  | 'pdf'
  | 'docx'
  | 'xlsx'
  | 'xls'
  | 'pptx'
  | 'image'
  | 'zip'
  | 'tar'
  | 'gzip'
  | 'unknown';

const TEXT_EXTENSIONS = new Set([
  'txt',
  'text',
  'md',
  'markdown',
  'mdx',
  'rst',
  'adoc',
  'log',
  'tex',
  'bib',
  'org',
  'ts',
  'tsx',
  'mts',
  'cts',
  'js',
  'jsx',
  'mjs',
  'cjs',
  'py',
  'pyi',
  'ipynb',
  'rb',
  'go',
  'rs',
  'java',
  'kt',
  'kts',
  'scala',
  'swift',
  'c',
  'h',
  'cc',
  'cpp',
  'cxx',
  'hpp',
  'cs',
  'fs',
  'php',
  'pl',
  'lua',
  'r',
  'jl',
  'm',
  'dart',
  'sh',
  'bash',
  'zsh',
  'fish',
  'ps1',
  'bat',
  'sql',
  'graphql',
  'proto',
  'html',
  'htm',
  'xhtml',
  'css',
  'scss',
  'less',
  'xml',
  'xsl',
  'svg',
  'vue',
  'svelte',
  'yml',
  'yaml',
  'toml',
  'ini',
  'cfg',
  'conf',
  'env',
  'properties',
  'gitignore',
  'dockerfile',
  'makefile',
  'jsonl',
  'ndjson',
  'srt',
  'vtt',
  'diff',
  'patch',
]);
const IMAGE_EXTENSIONS = new Set([
  'png',
  'jpg',
  'jpeg',
  'gif',
  'webp',
  'bmp',
  'tif',
  'tiff',
  'ico',
  'avif',
  'heic',
  'heif',
]);
const BY_EXTENSION: Record<string, FileKind> = {
  json: 'json',
  csv: 'csv',
  tsv: 'tsv',
  tab: 'tsv',
  pdf: 'pdf',
  docx: 'docx',
  docm: 'docx',
  xlsx: 'xlsx',
  xlsm: 'xlsx',
  xls: 'xls',
  ods: 'xlsx',
  pptx: 'pptx',
  pptm: 'pptx',
  zip: 'zip',
  jar: 'zip',
  tar: 'tar',
  tgz: 'tar',
  gz: 'gzip',
};

/** Names used in preview headers. */
export const KIND_LABELS: Record<FileKind, string> = {
  text: 'text',
  json: 'JSON',
  csv: 'CSV',
  tsv: 'TSV',
  pdf: 'PDF',
  docx: 'DOCX document',
  xlsx: 'XLSX spreadsheet',
  xls: 'XLS spreadsheet',
  pptx: 'PPTX presentation',
  image: 'image',
  zip: 'ZIP archive',
  tar: 'tar archive',
  gzip: 'gzip-compressed file',
  unknown: 'unknown type',
};

function startsWith(head: Uint8Array, bytes: readonly number[], offset = 0): boolean {
  return bytes.every((byte, index) => head[offset + index] === byte);
}

/** True when a sample of a file looks like text: no NUL bytes and valid UTF-8 (a cut character at the end is tolerated). */
export function looksLikeText(head: Uint8Array): boolean {
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, Math.max(0, head.length - 3)));
    return true;
  } catch {
    return false;
  }
}

/**
 * Decides a file's kind from its name and its first bytes; the name wins when it is known,
 * the bytes decide for unknown or missing extensions.
 * @internal
 */
export function detectKind(fileName: string, head: Uint8Array): FileKind {
  const base = path.basename(fileName).toLowerCase();
  if (base.endsWith('.tar.gz')) return 'tar';
  const extension = base.includes('.') ? base.slice(base.lastIndexOf('.') + 1) : base;
  const known = BY_EXTENSION[extension];
  if (known) return known;
  if (IMAGE_EXTENSIONS.has(extension)) return 'image';
  if (TEXT_EXTENSIONS.has(extension)) return 'text';
  if (startsWith(head, [0x25, 0x50, 0x44, 0x46])) return 'pdf';
  if (startsWith(head, [0x50, 0x4b, 0x03, 0x04]) || startsWith(head, [0x50, 0x4b, 0x05, 0x06])) return 'zip';
  if (startsWith(head, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) return 'xls';
  if (startsWith(head, [0x1f, 0x8b])) return 'gzip';
  if (startsWith(head, [0x75, 0x73, 0x74, 0x61, 0x72], 257)) return 'tar';
  if (
    startsWith(head, [0x89, 0x50, 0x4e, 0x47]) ||
    startsWith(head, [0xff, 0xd8, 0xff]) ||
    startsWith(head, [0x47, 0x49, 0x46, 0x38]) ||
    (startsWith(head, [0x52, 0x49, 0x46, 0x46]) && startsWith(head, [0x57, 0x45, 0x42, 0x50], 8))
  ) {
    return 'image';
  }
  return looksLikeText(head) ? 'text' : 'unknown';
}
