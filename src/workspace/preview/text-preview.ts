import { countRecords, parseDelimited, renderRows, sniffDelimiter } from './delimited-text.js';
import { formatCount } from './bounded-text.js';
import type { FormatPreview } from './format-preview.js';

function lineCount(text: string): number {
  if (text === '') return 0;
  const breaks = text.match(/\r\n|\r|\n/g)?.length ?? 0;
  return /[\r\n]$/.test(text) ? breaks : breaks + 1;
}

/** Plain text, Markdown or code, with its line count when the whole file was read. */
export function previewText(text: string, complete: boolean): FormatPreview {
  return complete ? { details: `${formatCount(lineCount(text))} lines`, body: text } : { body: text };
}

/** JSON pretty-printed, with the shape of its top level; invalid JSON is shown as text with the parse error. */
export function previewJson(text: string, complete: boolean): FormatPreview {
  if (!complete) return { details: 'too large to parse, showing the start', body: text };
  let value: unknown;
  try {
    value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    return { details: `not valid JSON (${error instanceof Error ? error.message : String(error)})`, body: text };
  }
  const details = Array.isArray(value)
    ? `array of ${formatCount(value.length)} items`
    : value !== null && typeof value === 'object'
      ? `object with ${formatCount(Object.keys(value).length)} keys`
      : typeof value;
  return { details, body: JSON.stringify(value, null, 2) };
}

/** Header, row count and the first rows of a CSV or TSV file. */
export function previewDelimited(text: string, complete: boolean, delimiter?: string): FormatPreview {
  const separator = delimiter ?? sniffDelimiter(text);
  const rows = parseDelimited(text, separator, 51);
  const [header, ...firstRows] = rows;
  if (!header) return { details: 'empty', body: '' };
  const dataRows = complete ? countRecords(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) - 1 : undefined;
  const rowFacts =
    dataRows === undefined ? 'row count unknown (file too large to scan)' : `${formatCount(dataRows)} data rows`;
  const shownNote =
    dataRows === undefined || dataRows > firstRows.length ? `\n(first ${firstRows.length} data rows shown)` : '';
  return {
    details: `${header.length} columns, ${rowFacts}`,
    body: `Columns: ${header.join(', ')}\n${renderRows([header, ...firstRows])}${shownNote}`,
  };
}
