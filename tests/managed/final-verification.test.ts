/**
 * The final global check of managed mode: before a run ends `succeeded`, the Verifier judges the deliverable (the
 * manager's final answer and the files the executors produced) against the original request.
 */
import { describe, expect, it } from 'vitest';
import type { GenerateRequest, GenerateResult } from '../../src/backend/types.js';
import type { VerifyInput } from '../../src/contracts/roles.js';
import type { Verdict } from '../../src/contracts/work.js';
import { createHarness, type HarnessOptions } from '../../src/index.js';
import type { ManagedRunResult } from '../../src/modes/managed/index.js';
import { reply, ScriptedBackend, submit, toolCall, verdict } from '../../src/testing/index.js';
import { collect, tempDir, textOf } from '../harness/helpers.js';
import { decide, executeRecords, verdictOf, writeFileTool } from './helpers.js';

const TASK = 'Write report.md with the heading "# Rivers".';
const REPORT = { id: 'report', description: 'report.md starts with "# Rivers"' };
const NOTES = { id: 'notes', description: 'notes.md exists' };
const DEFECT = 'DEFECT-RIVERS: report.md with the heading "# Rivers" does not exist.';

const writeReport = [
  toolCall('write_file', { path: 'report.md', content: '# Rivers\n\nThe Nile.\n' }),
  submit('wrote report.md', ['report.md']),
];
const writeNotes = [toolCall('write_file', { path: 'notes.md', content: 'notes\n' }), submit('wrote notes.md')];
const auditPass = (id: string, observed: string) =>
  verdictOf('complete', 'clean', [{ recordId: id, check: `${id} checked`, observed, verdict: 'pass' }]);

function harness(backend: ScriptedBackend, dir: string, extra: Partial<HarnessOptions> = {}) {
  return createHarness({ backend, tools: [writeFileTool], workspace: dir, mode: 'managed', ...extra });
}

const ofPurpose = (backend: ScriptedBackend, purpose: string) => backend.calls.filter((c) => c.purpose === purpose);

describe('managed final verification', () => {
  it("verifies the manager's answer and the produced files against the request before it succeeds", async () => {
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT]), decide('done', { answer: 'FINAL-ANSWER: report.md is written.' })],
      execute: writeReport,
      audit: [auditPass('report', 'report.md: "# Rivers"')],
      verify: [verdict(true)],
    });
    const h = harness(backend, await tempDir());
    const events = collect(h);
    const result = (await h.run(TASK)) as ManagedRunResult;
    expect(result.status).toBe('succeeded');
    const [verifyCall, ...more] = ofPurpose(backend, 'verify');
    expect(more).toEqual([]);
    const request = textOf(verifyCall);
    expect(request).toContain(TASK);
    expect(request).toContain('FINAL-ANSWER: report.md is written.');
    // By content: the produced file's text, not only its name.
    expect(request).toContain('The Nile.');
    const finish = events.filter((e) => e.type === 'verify-finish');
    expect(finish).toMatchObject([{ type: 'verify-finish', attempt: 1, passed: true }]);
    expect(result.verdicts).toMatchObject([{ attempt: 1, status: 'passed' }]);
    expect(result.report.firstPassVerified).toBe(true);
    expect(result.deliverable.answer).toContain('FINAL-ANSWER: report.md is written.');
    expect(result.deliverable.files).toEqual(['report.md']);
  });

  it('shows the verifier exactly the final answer and the files the executors produced', async () => {
    const seen: VerifyInput[] = [];
    const verifier = {
      verify: async (input: VerifyInput): Promise<Verdict> => {
        seen.push(input);
        return {
          attempt: input.attempt ?? 1,
          status: 'passed',
          passed: true,
          defects: [],
          imagesSeen: 0,
          imagesSkipped: 0,
        };
      },
    };
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT]), decide('done', { answer: 'All done.' })],
      execute: writeReport,
      audit: [auditPass('report', 'report.md: "# Rivers"')],
    });
    const result = await harness(backend, await tempDir(), { components: { verifier } }).run(TASK);
    expect(result.status).toBe('succeeded');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      request: TASK,
      attempt: 1,
      deliverable: { answer: 'All done.', files: ['report.md'] },
    });
  });

  it('sends a failed check back to the manager as evidence, in a new round, until a check passes', async () => {
    const backend = new ScriptedBackend({
      manage: [
        executeRecords([NOTES]),
        decide('done', { answer: 'notes.md is written.' }),
        executeRecords([REPORT]),
        decide('done', { answer: 'report.md is written.' }),
      ],
      execute: [...writeNotes, ...writeReport],
      audit: [auditPass('notes', 'notes.md: "notes"'), auditPass('report', 'report.md: "# Rivers"')],
      verify: [verdict(false, [DEFECT]), verdict(true)],
    });
    const h = harness(backend, await tempDir());
    const events = collect(h);
    const result = (await h.run(TASK)) as ManagedRunResult;
    expect(result.status).toBe('succeeded');
    const manage = ofPurpose(backend, 'manage');
    // The manager's request after the failed check names its defect, marked as the verifier's finding.
    expect(textOf(manage[2])).toContain(DEFECT);
    expect(textOf(manage[1])).not.toContain(DEFECT);
    expect(events.filter((e) => e.type === 'verify-finish').map((e) => e.passed)).toEqual([false, true]);
    expect(result.verdicts.map((v) => v.status)).toEqual(['failed', 'passed']);
    expect(result.report.managed.rounds).toBe(4);
  });

  it('counts the round after a failed check against managed.maxRounds', async () => {
    const backend = new ScriptedBackend({
      manage: [executeRecords([NOTES]), decide('done', { answer: 'notes.md is written.' })],
      execute: writeNotes,
      audit: [auditPass('notes', 'notes.md: "notes"')],
      verify: [verdict(false, [DEFECT])],
    });
    const result = await harness(backend, await tempDir(), { managed: { maxRounds: 2 } }).run(TASK);
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('budget-exhausted');
    expect(result.error?.message).toContain('DEFECT-RIVERS');
  });

  it('ends "unverified" when no verdict can be had, keeping the deliverable', async () => {
    const lists: Record<string, GenerateResult[]> = {
      manage: [executeRecords([REPORT]), decide('done', { answer: 'report.md is written.' })],
      execute: [...writeReport],
      audit: [auditPass('report', 'report.md: "# Rivers"')],
    };
    // However often the verifier is asked, it never gives a verdict.
    const backend = new ScriptedBackend((request: GenerateRequest) =>
      request.purpose === 'verify'
        ? reply('I think it is fine.')
        : (lists[request.purpose ?? '']?.shift() ?? reply('?')),
    );
    const h = harness(backend, await tempDir());
    const events = collect(h);
    const result = await h.run(TASK);
    expect(result.status).toBe('unverified');
    expect(result.error?.code).toBe('verification-unavailable');
    expect(result.deliverable.files).toEqual(['report.md']);
    expect(result.verdicts.map((v) => v.status)).toEqual(['unverified']);
    expect(events.filter((e) => e.type === 'verify-finish')).toMatchObject([{ passed: false }]);
    expect(result.taskState?.records).toMatchObject([{ id: 'report', status: 'completed' }]);
  });

  it('uses roles.verify for the check', async () => {
    const main = new ScriptedBackend({
      manage: [executeRecords([REPORT]), decide('done', { answer: 'done' })],
      execute: writeReport,
      audit: [auditPass('report', 'report.md: "# Rivers"')],
    });
    const verifyBackend = new ScriptedBackend({ verify: [verdict(true)] });
    const result = await harness(main, await tempDir(), { roles: { verify: verifyBackend } }).run(TASK);
    expect(result.status).toBe('succeeded');
    expect(ofPurpose(verifyBackend, 'verify')).toHaveLength(1);
    expect(ofPurpose(main, 'verify')).toHaveLength(0);
  });

  it("is off with managed.finalVerification: false (the paper's loop as published)", async () => {
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT]), decide('done')],
      execute: writeReport,
      audit: [auditPass('report', 'report.md: "# Rivers"')],
    });
    const h = harness(backend, await tempDir(), { managed: { finalVerification: false } });
    const events = collect(h);
    const result = await h.run(TASK);
    expect(result.status).toBe('succeeded');
    expect(result.verdicts).toEqual([]);
    expect(events.some((e) => e.type === 'verify-finish')).toBe(false);
    expect(ofPurpose(backend, 'verify')).toHaveLength(0);
  });
});

/** Replies as a function of the request only, so a resumed run is asked what the stopped one would have been. */
function model(request: GenerateRequest): GenerateResult {
  const all = textOf(request);
  const lastIsTool = request.messages.at(-1)?.role === 'tool';
  switch (request.purpose) {
    case 'manage':
      if (!all.includes('[completed] notes:')) return executeRecords([NOTES]);
      if (all.includes(DEFECT) && !all.includes('[completed] report:')) return executeRecords([REPORT]);
      return decide('done', { answer: 'The work is done.' });
    case 'execute': {
      const report = all.includes('report.md starts with');
      if (lastIsTool) return submit('written');
      return report
        ? toolCall('write_file', { path: 'report.md', content: '# Rivers\n\nRIVERS-BODY\n' }, 'write-report')
        : toolCall('write_file', { path: 'notes.md', content: 'notes\n' }, 'write-notes');
    }
    case 'audit': {
      const id = /each record of the round: report/.test(all) ? 'report' : 'notes';
      return auditPass(id, `${id} is there`);
    }
    default:
      // Passed only once the verifier is shown the report's content.
      return all.includes('RIVERS-BODY') ? verdict(true) : verdict(false, [DEFECT]);
  }
}

describe('managed final verification, resumed', () => {
  it('keeps a failed check across a resume: the manager still sees it and it is not made again', async () => {
    const dir = await tempDir();
    const verifyCalls: number[] = [];
    const make = (run: number) => {
      const backend = new ScriptedBackend((request) => {
        if (request.purpose === 'verify') verifyCalls.push(run);
        return model(request);
      });
      return createHarness({ backend, tools: [writeFileTool], workspace: dir, mode: 'managed' });
    };
    const first = make(1);
    const controller = new AbortController();
    let checked = false;
    first.on('verify-finish', () => {
      checked = true;
    });
    // Stop while the manager is asked after the failed check (its decision is not saved yet).
    first.on('llm-request', (event) => {
      if (checked && event.purpose === 'manage') controller.abort();
    });
    const stopped = await first.run({ task: TASK, runId: 'verify-resume', signal: controller.signal });
    await first.close();
    expect(stopped.status).toBe('aborted');
    expect(verifyCalls).toEqual([1]);

    const again = make(2);
    const result = (await again.resume('verify-resume', { workspace: dir })) as ManagedRunResult;
    await again.close();
    expect(result.status).toBe('succeeded');
    // One check before the stop, one after the new work: the first is neither lost nor made again.
    expect(verifyCalls).toEqual([1, 2]);
    expect(result.verdicts.map((v) => v.status)).toEqual(['failed', 'passed']);
    expect(result.taskState.records.map((r) => [r.id, r.status])).toEqual([
      ['notes', 'completed'],
      ['report', 'completed'],
    ]);
  }, 30_000);
});
