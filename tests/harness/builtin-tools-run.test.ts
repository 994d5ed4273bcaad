import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { GenerateRequest, GenerateResult, Message } from '../../src/backend/types.js';
import { createHarness } from '../../src/harness/harness.js';
import { planOf, reply, submit, toolCall, verdict } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { builtinTools } from '../../src/tools/builtin/index.js';
import { makeWorkbook } from '../workspace/support/make-files.js';
import { unmarked } from '../verifier/support.js';

const SALES: unknown[][] = [
  ['Region', 'Revenue'],
  ['North', 1200],
  ['South', 800],
  ['East', 1500],
];

/** Python (standard library only) that reads the XLSX the way a model would write it, into `totals`. */
const READ_XLSX = `
import zipfile, json, xml.etree.ElementTree as ET
NS = '{http://schemas.openxmlformats.org/spreadsheetml/2006/main}'
book = zipfile.ZipFile('attachments/sales.xlsx')
shared = []
if 'xl/sharedStrings.xml' in book.namelist():
    shared = [''.join(t.text or '' for t in si.iter(NS + 't')) for si in ET.fromstring(book.read('xl/sharedStrings.xml')).iter(NS + 'si')]
rows = []
for row in ET.fromstring(book.read('xl/worksheets/sheet1.xml')).iter(NS + 'row'):
    cells = []
    for c in row.iter(NS + 'c'):
        kind, value = c.get('t'), c.findtext(NS + 'v')
        if kind == 's': value = shared[int(value)]
        elif kind == 'inlineStr': value = ''.join(t.text or '' for t in c.iter(NS + 't'))
        cells.append(value)
    rows.append(cells)
totals = {r[0]: float(r[1]) for r in rows[1:]}
print('TOTALS ' + json.dumps(totals))
`;

/** Python that uses the session's `totals` (persistence) to draw a bar chart as a real PNG. */
const DRAW_CHART = String.raw`
import zlib, struct
W, H = 120, 60
top = max(totals.values())
pixels = [[255] * (W * 3) for _ in range(H)]
width = W // len(totals)
for i, value in enumerate(totals.values()):
    for y in range(H - int(value / top * (H - 5)), H):
        for x in range(i * width + 4, (i + 1) * width - 4):
            pixels[y][x * 3:x * 3 + 3] = [30, 90, 200]
raw = b''.join(b'\x00' + bytes(row) for row in pixels)
def chunk(tag, data):
    return struct.pack('>I', len(data)) + tag + data + struct.pack('>I', zlib.crc32(tag + data) & 0xffffffff)
open('chart.png', 'wb').write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', W, H, 8, 2, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))
print('chart written')
`;

/** A message's text without the run's data markers (tests/security checks those). */
function textOf(message: Message | undefined): string {
  if (!message) return '';
  return unmarked(
    typeof message.content === 'string'
      ? message.content
      : message.content.map((p) => (p.type === 'text' ? p.text : '')).join(''),
  );
}

/** A scripted analyst: each reply is computed from what the dialogue holds so far. */
function analyst(request: GenerateRequest): GenerateResult {
  const toolTexts = request.messages.filter((m) => m.role === 'tool').map(textOf);
  const task = textOf(request.messages[1]);
  switch (request.purpose) {
    case 'plan':
      return planOf(
        {
          title: 'Compute revenue totals',
          objective: 'Read attachments/sales.xlsx and total the revenue per region with Python.',
          expectedOutput: 'totals',
        },
        {
          title: 'Write the report',
          objective: 'Write report.md with the totals and a bar chart chart.png.',
          expectedOutput: 'report.md, chart.png',
        },
      );
    case 'execute': {
      if (task.includes('Subtask 1 of 2')) {
        if (toolTexts.length === 0) return toolCall('read_file', { path: 'attachments/sales.xlsx' });
        if (toolTexts.length === 1) return toolCall('python_interpreter', { code: READ_XLSX });
        const totals = /TOTALS (\{.*\})/.exec(toolTexts[1] ?? '')?.[1] ?? '{}';
        return submit(`Revenue per region: ${totals}`);
      }
      const totals = JSON.parse(/Revenue per region: (\{.*?\})/.exec(task)?.[1] ?? '{}') as Record<string, number>;
      if (toolTexts.length === 0) return toolCall('python_interpreter', { code: `${READ_XLSX}\n${DRAW_CHART}` });
      if (toolTexts.length === 1) {
        const sum = Object.values(totals).reduce((a, b) => a + b, 0);
        const rows = Object.entries(totals).map(([region, value]) => `| ${region} | ${value} |`);
        const content = [
          '# Revenue report',
          '',
          '| Region | Revenue |',
          '|---|---|',
          ...rows,
          '',
          `Total revenue: ${sum}`,
          '',
          '![Revenue by region](chart.png)',
          '',
        ].join('\n');
        return toolCall('write_to_file', { path: 'report.md', content });
      }
      return submit('Wrote report.md with the chart chart.png.', ['report.md', 'chart.png']);
    }
    case 'synthesize':
      return submit('The report is report.md; the chart is chart.png.', ['report.md', 'chart.png']);
    case 'verify':
      return verdict(true);
    default:
      return reply('');
  }
}

const leftovers: string[] = [];
afterEach(async () => {
  for (const dir of leftovers.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('a harness with builtinTools() on a scripted backend', () => {
  it('reads an XLSX attachment, computes with Python, writes a Markdown report and a chart the verifier sees by content', async () => {
    const inbox = await mkdtemp(path.join(os.tmpdir(), 'hh-inbox-'));
    leftovers.push(inbox);
    const attachment = path.join(inbox, 'sales.xlsx');
    await writeFile(attachment, makeWorkbook({ Sales: SALES }));
    const backend = new ScriptedBackend(analyst);
    // Where bubblewrap is missing, Python needs approval; the test approves so it runs on any machine.
    const harness = createHarness({ backend, tools: builtinTools({ python: { approve: () => true } }) });

    const result = await harness.run({
      task: 'Summarise revenue by region from the attached spreadsheet in report.md with a bar chart.',
      attachments: [attachment],
    });
    leftovers.push(result.workspace);

    expect(result.status).toBe('succeeded');
    expect(result.deliverable.files).toEqual(['report.md', 'chart.png']);
    const report = await readFile(path.join(result.workspace, 'report.md'), 'utf8');
    expect(report).toContain('| East | 1500 |');
    expect(report).toContain('Total revenue: 3500');
    const png = await readFile(path.join(result.workspace, 'chart.png'));
    expect(png.subarray(1, 4).toString()).toBe('PNG');

    // The spreadsheet reached the model as a preview of its rows, not as raw bytes.
    const readObservation = backend.callsFor('execute')[1]?.messages.find((m) => m.role === 'tool');
    expect(textOf(readObservation)).toContain('East');

    const verifyPrompt = textOf(backend.callsFor('verify')[0]?.messages[1]);
    expect(verifyPrompt).toContain('### File report.md');
    expect(verifyPrompt).toContain('Total revenue: 3500');
    expect(verifyPrompt).toContain('### File chart.png');
    expect(verifyPrompt).toMatch(/120\s*[x×]\s*60/);
    expect(verifyPrompt).toContain('### File attachments/sales.xlsx');
    expect(result.report.toolCallsByTool).toMatchObject({ read_file: 1, python_interpreter: 2, write_to_file: 1 });
  });
});
