/**
 * A small RFC 4180 reader: quoted fields, doubled quotes, line breaks inside quotes, CRLF.
 * @internal
 */
export function parseDelimited(text: string, delimiter: string, maxRows = Number.POSITIVE_INFINITY): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let index = 0;
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  while (index < source.length && rows.length < maxRows) {
    const char = source[index] as string;
    if (quoted) {
      if (char === '"') {
        if (source[index + 1] === '"') {
          field += '"';
          index += 1;
        } else {
          quoted = false;
        }
      } else {
        field += char;
      }
    } else if (char === '"' && field === '') {
      quoted = true;
    } else if (char === delimiter) {
      row.push(field);
      field = '';
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && source[index + 1] === '\n') index += 1;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else {
      field += char;
    }
    index += 1;
  }
  if (rows.length < maxRows && (field !== '' || row.length > 0)) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** Picks `,`, `;` or tab for a `.csv` file from the delimiters seen in its first line. */
export function sniffDelimiter(text: string): string {
  const firstLine = text.slice(0, text.search(/\r?\n|$/));
  const counts = [',', ';', '\t'].map((delimiter) => ({ delimiter, count: firstLine.split(delimiter).length - 1 }));
  counts.sort((a, b) => b.count - a.count);
  return counts[0] && counts[0].count > 0 ? counts[0].delimiter : ',';
}

/** Counts records the way {@link parseDelimited} splits them, without building them. */
export function countRecords(text: string): number {
  let count = 0;
  let quoted = false;
  let sawContent = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (char === '"') quoted = !quoted;
    if (!quoted && (char === '\n' || char === '\r')) {
      if (char === '\r' && text[index + 1] === '\n') index += 1;
      count += 1;
      sawContent = false;
    } else {
      sawContent = true;
    }
  }
  return sawContent ? count + 1 : count;
}

/** Renders rows as a pipe table, each cell on one line and at most `maxCell` characters. */
export function renderRows(rows: readonly (readonly unknown[])[], maxCell = 80): string {
  return rows
    .map((row) => {
      const cells = row.map((cell) => {
        const text = cell === null || cell === undefined ? '' : String(cell);
        const flat = text.replace(/\s*[\r\n]+\s*/g, ' ').replace(/\|/g, '\\|');
        return flat.length > maxCell ? `${flat.slice(0, maxCell - 1)}…` : flat;
      });
      return `| ${cells.join(' | ')} |`;
    })
    .join('\n');
}
