import type * as XLSX from '@e965/xlsx';
import { renderRows } from './delimited-text.js';
import type { FormatPreview } from './format-preview.js';

/** Rows parsed per sheet: enough for a preview, few enough that a huge workbook stays cheap. */
const SHEET_ROWS = 60;

function dimensions(
  utils: typeof XLSX.utils,
  range: string | undefined,
): { ref: string; rows: number; columns: number } | undefined {
  if (!range) return undefined;
  const decoded = utils.decode_range(range);
  return { ref: range, rows: decoded.e.r - decoded.s.r + 1, columns: decoded.e.c - decoded.s.c + 1 };
}

/** Sheets of an XLSX/XLS/ODS workbook: name, used range, and the first rows as formatted values. */
export async function previewWorkbook(data: Uint8Array, maxChars: number): Promise<FormatPreview> {
  const XLSX = await import('@e965/xlsx');
  const workbook = XLSX.read(data, { type: 'buffer', sheetRows: SHEET_ROWS, cellFormula: false, cellHTML: false });
  const parts: string[] = [];
  let length = 0;
  for (const name of workbook.SheetNames) {
    const sheet = workbook.Sheets[name];
    if (!sheet) continue;
    // With sheetRows set, "!ref" covers only the parsed rows and "!fullref" the whole used range.
    const size = dimensions(XLSX.utils, (sheet['!fullref'] as string | undefined) ?? sheet['!ref']);
    if (!size) {
      parts.push(`## Sheet "${name}": empty`);
      continue;
    }
    const heading = `## Sheet "${name}": ${size.ref} (${size.rows} rows × ${size.columns} columns)`;
    if (length > maxChars) {
      parts.push(heading);
      continue;
    }
    const rows = XLSX.utils.sheet_to_json<unknown[]>(sheet, { header: 1, raw: false, defval: '', blankrows: false });
    const shown = rows.slice(0, 20);
    const more = size.rows > shown.length ? `\n(first ${shown.length} of ${size.rows} rows)` : '';
    const part = `${heading}\n${renderRows(shown)}${more}`;
    parts.push(part);
    length += part.length;
  }
  const count = workbook.SheetNames.length;
  return { details: `${count} ${count === 1 ? 'sheet' : 'sheets'}`, body: parts.join('\n\n') };
}
