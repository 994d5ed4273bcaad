import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { create as createTar } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { previewFile } from '../../src/workspace/index.js';
import { makeDocx, makePdf, makePng, makePptx, makeWorkbook, makeZip } from './support/make-files.js';

let dir: string;

async function put(name: string, data: string | Uint8Array): Promise<string> {
  const file = path.join(dir, name);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, data);
  return file;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'preview-test-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('previewFile: text formats', () => {
  it('shows a Markdown file whole with its line count', async () => {
    const preview = await previewFile(await put('notes.md', '# Title\n\nSome *text*.\n'));
    expect(preview).toBe('notes.md (text, 22 B, 3 lines)\n# Title\n\nSome *text*.\n');
  });

  it('uses the display name given', async () => {
    const preview = await previewFile(await put('a/b.ts', 'export const x = 1;'), { displayName: 'a/b.ts' });
    expect(preview.startsWith('a/b.ts (text, 19 B, 1 lines)')).toBe(true);
  });

  it('truncates long text to maxChars with an explicit marker', async () => {
    const text = Array.from({ length: 5000 }, (_, i) => `line ${i}`).join('\n');
    const preview = await previewFile(await put('long.log', text), { maxChars: 1000 });
    expect(preview.length).toBeLessThanOrEqual(1000);
    expect(preview).toContain('line 0\nline 1');
    expect(preview).toMatch(
      /\[… truncated: [\d ]+ more characters; read_file with startLine\/endLine shows other lines\]$/,
    );
  });

  it('bounds every preview by the 10 000 character default', async () => {
    const preview = await previewFile(await put('huge.txt', 'é'.repeat(50_000)));
    expect(preview.length).toBeLessThanOrEqual(10_000);
    expect(preview).toContain('truncated');
  });

  it('pretty-prints JSON and names its top-level shape', async () => {
    const preview = await previewFile(await put('data.json', '{"name":"x","items":[1,2]}'));
    expect(preview).toContain('(JSON, 26 B, object with 2 keys)');
    expect(preview).toContain('{\n  "name": "x",\n  "items": [\n    1,\n    2\n  ]\n}');
  });

  it('shows invalid JSON as text with the parse error', async () => {
    const preview = await previewFile(await put('broken.json', '{"a": '));
    expect(preview).toMatch(/not valid JSON/);
    expect(preview).toContain('{"a": ');
  });

  it('summarizes a CSV: columns, data row count, first rows, quoted fields', async () => {
    const rows = ['region,revenue,note', 'north,100,"says ""hi"""', 'south,200,"two\nlines"'];
    for (let i = 0; i < 100; i++) rows.push(`r${i},${i},n`);
    const preview = await previewFile(await put('sales.csv', rows.join('\n') + '\n'));
    expect(preview).toContain('(CSV,');
    expect(preview).toContain('3 columns, 102 data rows');
    expect(preview).toContain('Columns: region, revenue, note');
    expect(preview).toContain('| north | 100 | says "hi" |');
    expect(preview).toContain('| south | 200 | two lines |');
    expect(preview).toContain('(first 50 data rows shown)');
    expect(preview).not.toContain('| r60 |');
  });

  it('detects semicolon-separated CSV and reads TSV', async () => {
    const semicolon = await previewFile(await put('eu.csv', 'a;b\n1,5;2\n'));
    expect(semicolon).toContain('| 1,5 | 2 |');
    const tsv = await previewFile(await put('t.tsv', 'x\ty\n1\t2\n'));
    expect(tsv).toContain('2 columns, 1 data rows');
    expect(tsv).toContain('| 1 | 2 |');
  });

  it('treats an unknown extension with UTF-8 content as text', async () => {
    expect(await previewFile(await put('README', 'hello'))).toContain('README (text, 5 B, 1 lines)\nhello');
  });
});

describe('previewFile: documents', () => {
  it('extracts PDF text page by page with the page count', async () => {
    const preview = await previewFile(
      await put('paper.pdf', makePdf(['Introduction to harnesses', 'Results and tables'])),
    );
    expect(preview).toContain('(PDF, ');
    expect(preview).toContain('2 pages)');
    expect(preview).toMatch(/--- page 1 ---\nIntroduction to harnesses\n--- page 2 ---\nResults and tables/);
  });

  it('extracts DOCX text', async () => {
    const preview = await previewFile(
      await put('memo.docx', await makeDocx(['Quarterly memo', 'Revenue grew & costs fell.'])),
    );
    expect(preview).toContain('DOCX document');
    expect(preview).toContain('Quarterly memo\n\nRevenue grew & costs fell.');
  });

  it('lists XLSX sheets with dimensions and first rows', async () => {
    const data = makeWorkbook({
      Sales: [
        ['Region', 'Q1', 'Q2'],
        ['North', 10, 12],
        ['South', 7, 9],
      ],
      Empty: [],
    });
    const preview = await previewFile(await put('book.xlsx', data));
    expect(preview).toContain('XLSX spreadsheet');
    expect(preview).toContain('2 sheets');
    expect(preview).toContain('## Sheet "Sales": A1:C3 (3 rows × 3 columns)');
    expect(preview).toContain('| Region | Q1 | Q2 |\n| North | 10 | 12 |');
    expect(preview).toContain('## Sheet "Empty": empty');
  });

  it('reports the full size of a large sheet while showing only its first rows', async () => {
    const rows: unknown[][] = [['id', 'value']];
    for (let i = 1; i <= 500; i++) rows.push([i, i * 2]);
    const preview = await previewFile(await put('big.xlsx', makeWorkbook({ Data: rows })));
    expect(preview).toContain('## Sheet "Data": A1:B501 (501 rows × 2 columns)');
    expect(preview).toContain('(first 20 of 501 rows)');
    expect(preview).not.toContain('| 300 |');
  });

  it('reads legacy XLS workbooks', async () => {
    const preview = await previewFile(
      await put(
        'old.xls',
        makeWorkbook(
          {
            Legacy: [
              ['a', 'b'],
              [1, 2],
            ],
          },
          'xls',
        ),
      ),
    );
    expect(preview).toContain('XLS spreadsheet');
    expect(preview).toContain('## Sheet "Legacy": A1:B2 (2 rows × 2 columns)');
    expect(preview).toContain('| 1 | 2 |');
  });

  it('shows PPTX text slide by slide in presentation order', async () => {
    const data = await makePptx([['Second title', 'detail'], ['First title']], [1, 0]);
    const preview = await previewFile(await put('deck.pptx', data));
    expect(preview).toContain('PPTX presentation');
    expect(preview).toContain('2 slides');
    expect(preview).toContain('--- slide 1 ---\nFirst title\n--- slide 2 ---\nSecond title\ndetail');
  });

  it('recognizes a PDF without an extension by its bytes', async () => {
    const preview = await previewFile(await put('download', makePdf(['Magic bytes'])));
    expect(preview).toContain('(PDF, ');
    expect(preview).toContain('Magic bytes');
  });
});

describe('previewFile: images and archives', () => {
  it('gives an image type and dimensions', async () => {
    const preview = await previewFile(await put('chart.png', makePng(64, 32)));
    expect(preview).toMatch(/^chart\.png \(image, [\d.]+ (B|KB), PNG, 64×32 px\)$/);
  });

  it('lists a ZIP archive', async () => {
    const preview = await previewFile(await put('bundle.zip', await makeZip({ 'a.txt': 'a', 'dir/b.csv': 'x,y' })));
    expect(preview).toContain('ZIP archive');
    expect(preview).toContain('a.txt');
    expect(preview).toContain('dir/b.csv');
  });

  it('lists a gzip-compressed tar archive with sizes', async () => {
    await put('src/one.txt', 'hello');
    await put('src/two.txt', 'world!');
    const archive = path.join(dir, 'src.tar.gz');
    await createTar({ gzip: true, file: archive, cwd: dir }, ['src/one.txt', 'src/two.txt']);
    const preview = await previewFile(archive);
    expect(preview).toContain('tar archive');
    expect(preview).toContain('2 entries');
    expect(preview).toContain('src/one.txt (5 B)');
    expect(preview).toContain('src/two.txt (6 B)');
  });
});

describe('previewFile: never crashes', () => {
  it('gives a one-line preview for unknown binary data', async () => {
    const data = Buffer.alloc(2048, 0);
    data.write('\u0001\u0002garbage', 0);
    expect(await previewFile(await put('blob.bin', data))).toBe('blob.bin: binary file, 2.0 KB, type unknown.');
  });

  it('says a corrupt document could not be parsed', async () => {
    const preview = await previewFile(await put('bad.pdf', Buffer.from('%PDF-1.4 this is not a pdf')));
    expect(preview).toMatch(/^bad\.pdf: PDF, 26 B, could not be parsed \(.+\)\.$/);
    const docx = await previewFile(await put('bad.docx', Buffer.from('not a zip at all')));
    expect(docx).toMatch(/^bad\.docx: DOCX document, 16 B, could not be parsed/);
    const xlsx = await previewFile(await put('bad.pptx', await makeZip({ 'x.txt': 'no slides' })));
    expect(xlsx).toContain('0 slides');
  });

  it('handles empty files, directories and missing files', async () => {
    expect(await previewFile(await put('empty.csv', ''))).toBe('empty.csv: empty file (0 B).');
    await put('folder/inner.txt', 'x');
    await mkdir(path.join(dir, 'folder', 'sub'));
    expect(await previewFile(path.join(dir, 'folder'))).toBe('folder (directory, 2 entries)\ninner.txt\nsub/');
    expect(await previewFile(path.join(dir, 'missing.txt'))).toBe('missing.txt: does not exist.');
  });

  it('rejects a non-positive maxChars', async () => {
    await expect(previewFile(await put('x.txt', 'x'), { maxChars: 0 })).rejects.toMatchObject({
      code: 'invalid-options',
    });
  });
});
