/**
 * The page of a run as a user gets it: the harness ran in a workspace and wrote `.harness/events.jsonl`, and
 * `horizon-harness show <workspace>` renders that file. Its figures are the report's; a run stopped and resumed in
 * the same workspace is one log, and the page shows the resumed run whole.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseHTML } from 'linkedom';
import { beforeAll, describe, expect, it } from 'vitest';
import { type CliIo, main } from '../../src/cli/main.js';
import { demoRun, type LoggedRun, managedRun, resumedRun } from './support/runs.js';

let runs: Record<string, LoggedRun>;

beforeAll(async () => {
  const [demo, managed, resumed] = await Promise.all([demoRun(), managedRun(), resumedRun()]);
  runs = { demo: demo, managed: managed, resumed: resumed };
}, 60_000);

/** `horizon-harness show <workspace>`, and the page it wrote. */
async function show(workspace: string) {
  let stderr = '';
  const io: CliIo = { stdout: { write: () => true }, stderr: { write: (t: string) => (stderr += t) }, env: {} };
  const code = await main(['show', workspace], io);
  expect(stderr).toBe('');
  expect(code).toBe(0);
  return parseHTML(await readFile(path.join(workspace, 'run.html'), 'utf8')).document;
}

describe('show <workspace> renders the log the harness wrote', () => {
  it.each(['demo', 'managed', 'resumed'])('the %s run: figures as the report has them', async (name) => {
    const { workspace, result } = runs[name]!;
    const document = await show(workspace);
    const { report } = result;
    const fact = (label: string) =>
      Number(document.querySelector(`dd[data-fact="${label}"]`)?.textContent?.replace(/\D/g, ''));
    expect(document.getElementById('run-status')?.textContent).toBe(result.status);
    expect(JSON.parse(document.getElementById('run-data')?.textContent ?? '').report).toEqual(report);
    expect(fact('Model calls')).toBe(report.modelCalls);
    expect(document.querySelectorAll('circle.call[data-answered="true"]')).toHaveLength(report.modelCalls);
    for (const [purpose, usage] of Object.entries(report.byPurpose)) {
      expect(
        document.querySelectorAll(`circle.call[data-purpose="${purpose}"][data-answered="true"]`),
        purpose,
      ).toHaveLength(usage?.calls ?? 0);
    }
    expect(fact('Tokens in')).toBe(report.inputTokens);
    expect(fact('Resumes')).toBe(report.resumes.count);
    // Every tool call the report counts has its row, with the output the model was shown.
    const rows = [...document.querySelectorAll('tr[data-tool]')].filter(
      (row) => row.getAttribute('data-tool') !== 'submit_answer',
    );
    expect(rows).toHaveLength(report.toolCalls);
    expect(rows.every((row) => row.querySelector('details.output pre') !== null)).toBe(true);
  });

  it('a run stopped and resumed in one workspace is one log, and its page is the whole run', async () => {
    const { workspace, events, result } = runs.resumed!;
    const types = events.map((event) => event.type);
    expect(types.filter((type) => type === 'run-start')).toHaveLength(1);
    expect(types.filter((type) => type === 'run-resume')).toHaveLength(1);
    expect(new Set(events.map((event) => event.runId))).toEqual(new Set([result.runId]));
    const document = await show(workspace);
    expect(document.getElementById('run-status')?.textContent).toBe('succeeded');
    expect(document.querySelectorAll('.timeline .resume')).toHaveLength(1);
    // The subtasks finished before the stop are on the page with their tool calls, beside those after it.
    const resume = types.indexOf('run-resume');
    const before = events.slice(0, resume).flatMap((e) => (e.type === 'subtask-finish' ? [e.record.id] : []));
    expect(before.length).toBeGreaterThan(0);
    expect(
      [...document.querySelectorAll('.lane[data-kind="subtask"]')].map((lane) => lane.getAttribute('data-status')),
    ).toEqual(result.subtasks.map((subtask) => subtask.status));
    for (const id of before) {
      expect(
        Number(document.querySelector(`details.loop[data-lane="${id}"]`)?.getAttribute('data-tool-calls')),
      ).toBeGreaterThan(0);
    }
  });
});
