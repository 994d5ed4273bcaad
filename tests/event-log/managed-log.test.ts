import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEventLog } from '../../src/event-log/read.js';
import { createHarness } from '../../src/harness/harness.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { reply, toolCall, verdict } from '../../src/testing/replies.js';
import { collect } from '../harness/helpers.js';
import { decide, executeRecords, tempDir, verdictOf, writeFileTool } from '../managed/helpers.js';

const REPORT = { id: 'report', description: 'report.md exists with the heading "# Rivers"' };

describe('the event log of a managed run', () => {
  it('holds each round: decision with contract and state, audit with findings and state; writing it is no integrity violation', async () => {
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT]), decide('done')],
      execute: [toolCall('write_file', { path: 'report.md', content: '# Rivers' }), reply('Wrote report.md.')],
      audit: [
        toolCall('read_file', { path: 'report.md' }),
        verdictOf('complete', 'clean', [
          { recordId: 'report', check: 'report.md exists', observed: '# Rivers', verdict: 'pass' },
        ]),
      ],
      verify: [verdict(true)],
    });
    const workspace = await tempDir();
    const harness = createHarness({ backend, tools: [writeFileTool], workspace, mode: 'managed' });
    const seen = collect(harness);
    const result = await harness.run('Write report.md with the heading "# Rivers".');
    expect(result.status).toBe('succeeded');

    const logged = await readEventLog(path.join(workspace, '.harness', 'events.jsonl'));
    expect(logged).toEqual(seen);
    expect(logged.some((event) => event.type === 'integrity-violation')).toBe(false);
    const decisions = logged.flatMap((event) => (event.type === 'manager-decision' ? [event] : []));
    expect(decisions.map((event) => event.next)).toEqual(['execute', 'done']);
    expect(decisions[0]?.contract?.recordIds).toEqual(['report']);
    expect(decisions[0]?.state.records).toMatchObject([{ id: 'report' }]);
    const audit = logged.find((event) => event.type === 'audit-finish');
    expect(audit).toMatchObject({ round: 1, status: 'complete', integrity: 'clean' });
    expect(audit?.type === 'audit-finish' && audit.findings).toMatchObject([{ recordId: 'report', verdict: 'pass' }]);
    expect(audit?.type === 'audit-finish' && audit.state.records).toMatchObject([
      { id: 'report', status: 'completed' },
    ]);
    expect(logged.at(-1)?.type).toBe('run-finish');
  });
});
