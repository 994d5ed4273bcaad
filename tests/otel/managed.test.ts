import { SpanStatusCode } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { createHarness } from '../../src/index.js';
import { instrument } from '../../src/otel/index.js';
import { ScriptedBackend, reply, toolCall, verdict } from '../../src/testing/index.js';
import { decide, executeRecords, tempDir, verdictOf, writeFileTool } from '../managed/helpers.js';
import { inMemoryTracing, renderTree, spanNamed, tickingClock } from './helpers.js';

const REPORT = { id: 'report', description: 'report.md exists with the heading "# Rivers"' };

describe('instrument: a managed run', () => {
  it('traces each round as manage, execute and audit, with their outcomes', async () => {
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
    const harness = createHarness({
      backend,
      tools: [writeFileTool],
      workspace: await tempDir(),
      mode: 'managed',
      now: tickingClock(),
    });
    const { tracer, spans } = inMemoryTracing();
    const stop = await instrument(harness, { tracer });
    const result = await harness.run('Write report.md with the heading "# Rivers".');
    stop();
    expect(result.status).toBe('succeeded');

    const all = spans();
    expect(renderTree(all)).toBe(
      [
        'invoke_agent horizon-harness',
        '  round',
        '    manage',
        '      chat scripted',
        '    execute',
        '      chat scripted',
        '    audit',
        '      chat scripted',
        '      execute_tool submit_answer',
        '  round',
        '    manage',
        '      chat scripted',
        '    execute',
        '      chat scripted',
        '      execute_tool write_file',
        '      chat scripted',
        '    audit',
        '      chat scripted',
        '      execute_tool read_file',
        '      chat scripted',
        '      execute_tool submit_answer',
        '  round',
        '    manage',
        '      chat scripted',
        '    verify',
        '      chat scripted',
      ].join('\n'),
    );
    expect(spanNamed(all, 'invoke_agent horizon-harness').attributes).toMatchObject({
      'horizon_harness.mode': 'managed',
      'horizon_harness.status': 'succeeded',
    });
    expect(spanNamed(all, 'round', 1).attributes['horizon_harness.round']).toBe(2);
    expect(spanNamed(all, 'manage', 0).attributes).toMatchObject({
      'horizon_harness.round': 1,
      'horizon_harness.manager.next': 'execute',
      'horizon_harness.manager.records': 1,
    });
    expect(spanNamed(all, 'manage', 2).attributes['horizon_harness.manager.next']).toBe('done');
    // The final verification belongs to the round of the `done` it followed.
    expect(spanNamed(all, 'verify', 0).attributes).toMatchObject({
      'horizon_harness.round': 3,
      'horizon_harness.verify.passed': true,
    });
    expect(spanNamed(all, 'audit', 0).attributes).toMatchObject({
      'horizon_harness.audit.status': 'incomplete',
      'horizon_harness.audit.integrity': 'clean',
      'horizon_harness.audit.findings': 1,
    });
    expect(spanNamed(all, 'audit', 1).attributes['horizon_harness.audit.status']).toBe('complete');
    expect(spanNamed(all, 'chat scripted', 2).attributes).toMatchObject({
      'horizon_harness.purpose': 'audit',
      'horizon_harness.scope': 'audit-1',
    });
    expect(all.every((s) => s.status.code !== SpanStatusCode.ERROR)).toBe(true);
  });
});
