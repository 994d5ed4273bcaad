import { describe, expect, it } from 'vitest';
import { ABLATION_CONFIGS } from '../../src/benchmark/agentif/configs.js';
import { PAIR_FORMAT, type PairRecord } from '../../src/benchmark/agentif/pair-record.js';
import { summarize } from '../../src/benchmark/agentif/summary.js';
import { renderTable } from '../../src/benchmark/agentif/table.js';
import type { RunResult } from '../../src/contracts/work.js';
import { buildReport } from '../../src/modes/shared/report.js';

function pair(taskId: string, status: RunResult['status']): PairRecord {
  return {
    format: PAIR_FORMAT,
    taskId,
    title: taskId,
    config: 'FULL',
    hasAttachments: false,
    run: {
      runId: taskId,
      status,
      answer: '',
      files: [],
      workspace: '/tmp/none',
      report: buildReport([], { wallTimeMs: 60_000, subtasks: [], verdicts: [] }),
    },
  };
}

describe('benchmark summary: run statuses', () => {
  it('counts an unverified run as a run that did not succeed, and says how many were unverified', () => {
    const full = ABLATION_CONFIGS.filter((c) => c.name === 'FULL');
    const [summary] = summarize(full, [pair('a', 'succeeded'), pair('b', 'unverified'), pair('c', 'failed')]);
    expect(summary).toMatchObject({ failedRuns: 2, unverifiedRuns: 1 });
    expect(renderTable(summary ? [summary] : [])).toContain('| 2 (1) |');
  });
});
