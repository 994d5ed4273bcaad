/**
 * Managed mode's loop bounds: `limits.maxIterations` bounds each loop (each round's executor, each audit), not the
 * run; the rounds are bounded by `managed.maxRounds` and the run by its time limit.
 */
import { describe, expect, it } from 'vitest';
import { createHarness, type HarnessOptions } from '../../src/index.js';
import { ScriptedBackend, submit, toolCall, verdict } from '../../src/testing/index.js';
import { tempDir } from '../harness/helpers.js';
import { decide, executeRecords, verdictOf, writeFileTool } from './helpers.js';

const TASK = 'Write report.md with the heading "# Rivers".';
const REPORT = { id: 'report', description: 'report.md starts with "# Rivers"' };
const failing = verdictOf('incomplete', 'clean', [
  { recordId: 'report', check: 'heading', observed: 'report.md starts with "# Lakes"', verdict: 'fail' },
]);
const passing = verdictOf('complete', 'clean', [
  { recordId: 'report', check: 'heading', observed: 'report.md starts with "# Rivers"', verdict: 'pass' },
]);

/**
 * Two rounds of two iterations per loop: the first writes the wrong heading and its audit fails, the second fixes it
 * and its audit passes; then the final verification passes.
 */
function twoRounds(): ScriptedBackend {
  return new ScriptedBackend({
    manage: [
      executeRecords([REPORT]),
      decide('execute', {
        contract: { task: 'Fix the heading.', acceptanceCriteria: [REPORT.description], recordIds: ['report'] },
      }),
      decide('done', { answer: 'report.md is written.' }),
    ],
    execute: [
      toolCall('write_file', { path: 'report.md', content: '# Lakes\n' }),
      submit('wrote report.md'),
      toolCall('write_file', { path: 'report.md', content: '# Rivers\n' }),
      submit('fixed the heading'),
    ],
    audit: [
      toolCall('read_file', { path: 'report.md' }),
      failing,
      toolCall('read_file', { path: 'report.md' }),
      passing,
    ],
    verify: [verdict(true)],
  });
}

/** A managed harness over `backend` with the write tool and `limits`. */
async function managedHarness(backend: ScriptedBackend, limits: HarnessOptions['limits']) {
  return createHarness({ backend, tools: [writeFileTool], workspace: await tempDir(), mode: 'managed', limits });
}

describe('managed loop bounds', () => {
  it('gives every round its own limits.maxIterations: rounds that together use more still complete', async () => {
    const backend = twoRounds();
    const harness = await managedHarness(backend, { maxIterations: 2 });
    const result = await harness.run(TASK);
    // Eight loop iterations in all, four times the per-loop bound.
    expect(backend.calls.filter((c) => c.purpose === 'execute' || c.purpose === 'audit')).toHaveLength(8);
    expect(result.status).toBe('succeeded');
    expect(result.taskState?.records).toMatchObject([{ id: 'report', status: 'completed' }]);
  });

  it('bounds each executor loop by limits.maxIterations (below managed.executorIterations)', async () => {
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT]), decide('blocked', { reason: 'stop here' })],
      execute: [
        toolCall('write_file', { path: 'a.md', content: 'a' }),
        toolCall('write_file', { path: 'b.md', content: 'b' }),
        toolCall('write_file', { path: 'c.md', content: 'c' }),
      ],
      audit: [failing],
    });
    const harness = await managedHarness(backend, { maxIterations: 2 });
    const events: string[] = [];
    harness.on('audit-finish', (e) => events.push(e.status));
    const result = await harness.run(TASK);
    expect(backend.calls.filter((c) => c.purpose === 'execute')).toHaveLength(2);
    // The cut-off execution is still audited, and the run goes on to the manager's next decision.
    expect(events).toEqual(['incomplete']);
    expect(result.status).toBe('blocked');
  });

  it('stops at limits.maxRunIterations over all its loops, before a loop with nothing left starts', async () => {
    const backend = twoRounds();
    const harness = await managedHarness(backend, { maxRunIterations: 5 });
    const result = await harness.run(TASK);
    // Round 1 uses 4 (2 executing, 2 auditing); round 2's executor gets the 1 left, its audit none.
    expect(backend.calls.filter((c) => c.purpose === 'execute')).toHaveLength(3);
    expect(backend.calls.filter((c) => c.purpose === 'audit')).toHaveLength(2);
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('budget-exhausted');
    expect(result.error?.message).toContain('limits.maxRunIterations (5');
    expect(result.taskState?.records).toMatchObject([{ id: 'report', status: 'pending' }]);
  });
});
