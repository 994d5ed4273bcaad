/**
 * The report counts every model call the run's events show: each `llm-response` is one of `report.modelCalls` and
 * one of its purpose's `byPurpose[purpose].calls`, in both modes (a managed run's final verification included).
 */
import { describe, expect, it } from 'vitest';
import type { HarnessEvent } from '../../src/events.js';
import { demoRun, managedRun } from '../viewer/support/runs.js';

function countedCalls(events: readonly HarnessEvent[]) {
  const byPurpose: Record<string, number> = {};
  for (const event of events) {
    if (event.type === 'llm-response') byPurpose[event.purpose] = (byPurpose[event.purpose] ?? 0) + 1;
  }
  return { total: Object.values(byPurpose).reduce((sum, n) => sum + n, 0), byPurpose };
}

describe('the report counts every answered model call', () => {
  it.each([
    ['pipeline', demoRun],
    ['managed', managedRun],
  ])('%s mode', async (_mode, run) => {
    const { events, result } = await run();
    const counted = countedCalls(events);
    expect(counted.byPurpose.verify).toBeGreaterThan(0);
    expect(result.report.modelCalls).toBe(counted.total);
    const reported = Object.fromEntries(
      Object.entries(result.report.byPurpose).map(([purpose, usage]) => [purpose, usage?.calls]),
    );
    expect(reported).toEqual(counted.byPurpose);
  });
});
