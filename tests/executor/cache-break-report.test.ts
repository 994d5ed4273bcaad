import { describe, expect, it } from 'vitest';
import type { HarnessEvent } from '../../src/events.js';
import { newReportTally, reportFromTally, type ReportTally, tallyEvent } from '../../src/modes/shared/report.js';

const cacheBreak = (cause: 'aging' | 'compression', prefixTokensLost: number): HarnessEvent => ({
  type: 'cache-break',
  runId: 'r',
  timestamp: 1,
  purpose: 'execute',
  scope: 'subtask-1',
  cause,
  firstChangedMessage: 3,
  prefixTokensLost,
});

describe('the report counts cache breaks', () => {
  it('per cause, with the prefix tokens lost', () => {
    const tally = newReportTally();
    for (const event of [cacheBreak('aging', 100), cacheBreak('compression', 5_000), cacheBreak('aging', 40)])
      tallyEvent(tally, event);
    expect(reportFromTally(tally, { wallTimeMs: 1, subtasks: [], verdicts: [] }).cacheBreaks).toEqual({
      aging: { count: 2, prefixTokensLost: 140 },
      compression: { count: 1, prefixTokensLost: 5_000 },
    });
  });

  it('from a tally saved before cache breaks were counted', () => {
    const { cacheBreaks: _none, ...saved } = newReportTally();
    const old = saved as ReportTally;
    expect(reportFromTally(structuredClone(old), { wallTimeMs: 1, subtasks: [], verdicts: [] }).cacheBreaks).toEqual(
      {},
    );
    tallyEvent(old, cacheBreak('aging', 7));
    expect(old.cacheBreaks).toEqual({ aging: { count: 1, prefixTokensLost: 7 } });
  });
});
