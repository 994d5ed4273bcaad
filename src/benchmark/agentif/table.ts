/**
 * The summary as Markdown tables, like the paper's Table 3 (configurations and behaviour) and Table 2 (slices).
 * @module
 */
import type { ConfigSummary } from './summary.js';

const fixed = (value: number, digits: number) => value.toFixed(digits);
const ratio = (part: number, whole: number) => (whole ? `${part}/${whole}` : '—');

/** Markdown: the score and behaviour table, then the score-by-slice table when the data has slices. */
export function renderTable(summaries: readonly ConfigSummary[]): string {
  const header = [
    'Config',
    'Tasks',
    'Score',
    'Perfect',
    'Better than FULL',
    'Min/task',
    'Score/min',
    'Model calls',
    'Tool calls',
    'Tokens',
    'First-pass verified',
    'Repaired (recovered)',
    'Compressed tasks (total)',
    'Failed runs (unverified)',
    'Unjudged criteria',
  ];
  const rows = summaries.map((s) => [
    s.config,
    String(s.tasks),
    fixed(s.score, 3),
    String(s.perfect),
    s.betterThanFull === null ? '—' : String(s.betterThanFull),
    fixed(s.minutesPerTask, 2),
    s.scorePerMinute === null ? '—' : fixed(s.scorePerMinute, 2),
    fixed(s.modelCalls, 1),
    fixed(s.toolCalls, 1),
    String(Math.round(s.tokens)),
    ratio(s.firstPassVerified, s.verified),
    `${s.repaired} (${s.recovered})`,
    `${s.compressedTasks} (${s.compressions})`,
    `${s.failedRuns} (${s.unverifiedRuns})`,
    String(s.unjudgedCriteria),
  ]);
  const parts = [markdownTable(header, rows)];
  const sliceTable = renderSlices(summaries);
  if (sliceTable) parts.push(sliceTable);
  return `${parts.join('\n\n')}\n`;
}

function renderSlices(summaries: readonly ConfigSummary[]): string | undefined {
  const columns: Array<{ title: string; value: (s: ConfigSummary) => number | undefined }> = [];
  const has = (pick: (s: ConfigSummary) => Record<string, number>) =>
    [...new Set(summaries.flatMap((s) => Object.keys(pick(s))))].sort();
  if (summaries.some((s) => s.slices.attachments.without !== undefined))
    columns.push({ title: 'w/o attachments', value: (s) => s.slices.attachments.without });
  if (summaries.some((s) => s.slices.attachments.with !== undefined))
    columns.push({ title: 'w/ attachments', value: (s) => s.slices.attachments.with });
  for (const type of has((s) => s.slices.taskType))
    columns.push({ title: type, value: (s) => s.slices.taskType[type] });
  for (const domain of has((s) => s.slices.domain))
    columns.push({ title: domain, value: (s) => s.slices.domain[domain] });
  if (columns.length < 2) return undefined;
  const rows = summaries.map((s) => [
    s.config,
    ...columns.map((c) => {
      const value = c.value(s);
      return value === undefined ? '—' : fixed(value, 3);
    }),
  ]);
  return markdownTable(['Config', ...columns.map((c) => c.title)], rows);
}

function markdownTable(header: readonly string[], rows: readonly string[][]): string {
  const escapePipes = (cell: string) => cell.replace(/\|/g, '\\|');
  const line = (cells: readonly string[]) => `| ${cells.map(escapePipes).join(' | ')} |`;
  return [line(header), line(header.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)].join('\n');
}
