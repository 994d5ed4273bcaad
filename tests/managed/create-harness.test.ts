import { describe, expect, it } from 'vitest';
import { createHarness } from '../../src/index.js';
import { ScriptedBackend, reply, toolCall, verdict } from '../../src/testing/index.js';
import { collect } from '../harness/helpers.js';
import { decide, executeRecords, tempDir, verdictOf, writeFileTool } from './helpers.js';

const REPORT = { id: 'report', description: 'report.md exists with the heading "# Rivers"' };

describe("createHarness({ mode: 'managed' })", () => {
  it('catches a false claim, completes the record only on a clean audit, and succeeds on done', async () => {
    const backend = new ScriptedBackend({
      manage: [
        executeRecords([REPORT]),
        decide('execute', {
          contract: {
            task: 'Write report.md for real.',
            acceptanceCriteria: ['report.md exists'],
            recordIds: ['report'],
          },
        }),
        decide('done'),
      ],
      execute: [
        reply('Done! I wrote report.md.'),
        toolCall('write_file', { path: 'report.md', content: '# Rivers' }),
        reply('Wrote report.md.'),
      ],
      audit: [
        verdictOf('incomplete', 'clean', [
          { recordId: 'report', check: 'report.md exists', observed: 'no such file', verdict: 'fail' },
        ]),
        toolCall('read_file', { path: 'report.md' }),
        verdictOf('complete', 'clean', [
          { recordId: 'report', check: 'report.md exists', observed: '# Rivers', verdict: 'pass' },
        ]),
      ],
      verify: [verdict(true)],
    });
    const harness = createHarness({ backend, tools: [writeFileTool], workspace: await tempDir(), mode: 'managed' });
    const events = collect(harness);
    const result = await harness.run('Write report.md with the heading "# Rivers".');
    expect(events[0]).toMatchObject({ type: 'run-start', mode: 'managed' });
    const audits = events.flatMap((e) => (e.type === 'audit-finish' ? [e.status] : []));
    expect(audits).toEqual(['incomplete', 'complete']);
    expect(result.status).toBe('succeeded');
    expect(result.taskState?.records).toMatchObject([{ id: 'report', status: 'completed' }]);
    expect(result.taskState?.records[0]?.evidence.length).toBeGreaterThan(0);
  });

  it('rejects a misspelt managed option at createHarness', () => {
    const backend = new ScriptedBackend([]);
    expect(() => createHarness({ backend, mode: 'managed', managed: { maxRound: 3 } as never })).toThrow(/maxRound/);
  });
});
