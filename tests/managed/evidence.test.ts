/**
 * A record completes only on evidence about that record: a finding that names it, with an observation, from a clean
 * complete audit. Findings naming no record are shown to the manager and change no record.
 */
import { describe, expect, it } from 'vitest';
import { createHarness } from '../../src/index.js';
import { ScriptedBackend, toolCall, verdict } from '../../src/testing/index.js';
import { tempDir, textOf } from '../harness/helpers.js';
import { decide, executeRecords, verdictOf, writeFileTool } from './helpers.js';

const TASK = 'Write a.md and b.md.';
const A = { id: 'a', description: 'a.md exists' };
const B = { id: 'b', description: 'b.md exists' };

function harnessOn(backend: ScriptedBackend, dir: string) {
  return createHarness({ backend, tools: [writeFileTool], workspace: dir, mode: 'managed' });
}

const writeBoth = [
  toolCall('write_file', { path: 'a.md', content: 'A' }),
  toolCall('write_file', { path: 'b.md', content: 'B' }),
  toolCall('submit_answer', { answer: 'wrote both', files: ['a.md', 'b.md'] }),
];

describe('managed records complete only on their own evidence', () => {
  it('a finding naming no record completes none: both stay pending and the manager is told neither was addressed', async () => {
    const backend = new ScriptedBackend({
      manage: [executeRecords([A, B]), decide('blocked', { reason: 'stop here' })],
      execute: writeBoth,
      audit: [verdictOf('complete', 'clean', [{ check: 'seems fine', observed: 'looks good', verdict: 'pass' }])],
    });
    const result = await harnessOn(backend, await tempDir()).run(TASK);
    expect(result.taskState?.records).toMatchObject([
      { id: 'a', status: 'pending', evidence: [] },
      { id: 'b', status: 'pending', evidence: [] },
    ]);
    expect(result.taskState?.records[0]?.reason).toMatch(/no finding nam/);
    const second = textOf(backend.calls.filter((c) => c.purpose === 'manage')[1]);
    // The unattributed finding is shown, and the records the audit did not address are named.
    expect(second).toContain('seems fine');
    expect(second).toMatch(/did not address[^\n]*a, b/);
  });

  it('completes only the record a passing finding names, and only with an observation', async () => {
    const backend = new ScriptedBackend({
      manage: [executeRecords([A, B]), decide('blocked', { reason: 'stop here' })],
      execute: writeBoth,
      audit: [
        verdictOf('complete', 'clean', [
          { recordId: 'a', check: 'a.md exists', observed: 'a.md: "A"', verdict: 'pass' },
          { recordId: 'b', check: 'b.md exists', observed: '', verdict: 'pass' },
        ]),
      ],
    });
    const result = await harnessOn(backend, await tempDir()).run(TASK);
    expect(result.taskState?.records).toMatchObject([
      { id: 'a', status: 'completed' },
      { id: 'b', status: 'pending' },
    ]);
    expect(result.taskState?.records[1]?.reason).toMatch(/observ/);
  });

  it('an audit that reports "complete" with a failing finding naming no record completes nothing', async () => {
    const backend = new ScriptedBackend({
      manage: [executeRecords([A]), decide('blocked', { reason: 'stop here' })],
      execute: writeBoth,
      audit: [
        verdictOf('complete', 'clean', [
          { recordId: 'a', check: 'a.md exists', observed: 'a.md: "A"', verdict: 'pass' },
          { check: 'the build', observed: 'npm run build exits 1', verdict: 'fail' },
        ]),
      ],
    });
    const result = await harnessOn(backend, await tempDir()).run(TASK);
    expect(result.taskState?.records).toMatchObject([{ id: 'a', status: 'pending' }]);
    expect(result.taskState?.records[0]?.reason).toContain('npm run build exits 1');
    // Only the finding naming the record is its evidence.
    expect(result.taskState?.records[0]?.evidence.map((e) => e.check)).toEqual(['a.md exists']);
  });

  it('succeeds once each record has its own passing finding', async () => {
    const backend = new ScriptedBackend({
      manage: [executeRecords([A, B]), decide('done', { answer: 'a.md and b.md are written.' })],
      execute: writeBoth,
      audit: [
        verdictOf('complete', 'clean', [
          { recordId: 'a', check: 'a.md exists', observed: 'a.md: "A"', verdict: 'pass' },
          { recordId: 'b', check: 'b.md exists', observed: 'b.md: "B"', verdict: 'pass' },
        ]),
      ],
      verify: [verdict(true)],
    });
    const result = await harnessOn(backend, await tempDir()).run(TASK);
    expect(result.status).toBe('succeeded');
    expect(result.taskState?.records.map((r) => r.status)).toEqual(['completed', 'completed']);
  });
});
