import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GenerateRequest } from '../../src/backend/types.js';
import { HarnessError } from '../../src/errors.js';
import { defineTool } from '../../src/tools/define-tool.js';
import type { TaskState } from '../../src/modes/managed/index.js';
import { reply, ScriptedBackend, submit, toolCall, verdict } from '../../src/testing/index.js';
import { probeBwrap } from '../../src/tools/builtin/sandbox.js';
import { textOf, hang } from '../harness/helpers.js';
import { decide, executeRecords, managedRun, stateOnDisk, TASK, verdictOf, writeFileTool } from './helpers.js';

const REPORT = { id: 'report', description: 'report.md exists and starts with "# Rivers".' };

/** Tool names offered in a request. */
function toolsOf(request: GenerateRequest | undefined): string[] {
  return (request?.tools ?? []).map((t) => t.name).sort();
}

describe('managed run: the Manage-Execute-Audit loop', () => {
  it('completes a record only through a clean audit with evidence, and succeeds on done', async () => {
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT], 'Write report.md.'), decide('done')],
      execute: [
        toolCall('write_file', { path: 'report.md', content: '# Rivers\n' }),
        submit('I wrote report.md.', ['report.md']),
      ],
      audit: [
        toolCall('read_file', { path: 'report.md' }),
        verdictOf('complete', 'clean', [
          {
            recordId: 'report',
            check: 'report.md starts with "# Rivers"',
            observed: 'report.md: "# Rivers"',
            verdict: 'pass',
          },
        ]),
      ],
      verify: [verdict(true)],
    });
    const run = await managedRun({ backend });
    const result = await run.run();
    expect(result.status).toBe('succeeded');
    expect(result.taskState).toMatchObject({
      round: 2,
      records: [
        {
          id: 'report',
          status: 'completed',
          evidence: [{ round: 1, audit: 'audit-1', verdict: 'pass', observed: 'report.md: "# Rivers"' }],
        },
      ],
    });
    expect(result.deliverable.files).toEqual(['report.md']);
    expect(result.deliverable.answer).toContain('[completed] report');
    backend.assertComplete();

    // The auditor sees the contract and the claim, marked unverified, with read-only tools only.
    const audit = backend.callsFor('audit')[0];
    expect(textOf(audit)).toContain('UNVERIFIED');
    expect(textOf(audit)).toContain('I wrote report.md.');
    expect(textOf(audit)).toMatch(/Paths the harness saw change[^\n]*\n⟦data-([0-9a-f]{16})⟧report\.md⟦\/data-\1⟧/);
    // Plus the read-only command tool where the sandbox can mount the workspace read-only.
    const command = probeBwrap().available ? ['execute_command'] : [];
    expect(toolsOf(audit)).toEqual([...command, 'list_files', 'read_file', 'submit_answer']);
    // The manager never sees an executor's trace or claim.
    const secondManage = textOf(backend.callsFor('manage')[1]);
    expect(secondManage).not.toContain('TOOL-TRACE');
    expect(secondManage).not.toContain('I wrote report.md.');
    expect(secondManage).toContain('report.md starts with "# Rivers"');
    expect(backend.callsFor('manage')[0]?.tools ?? []).toEqual([]);
    // Every call carries its role's purpose and scope.
    expect(run.events('llm-request').map((e) => `${e.purpose}:${e.scope}`)).toEqual([
      'manage:manage-1',
      'execute:execute-1',
      'execute:execute-1',
      'audit:audit-1',
      'audit:audit-1',
      'manage:manage-2',
      'verify:verify-1',
    ]);
    const managed = result.report.managed;
    expect(managed).toMatchObject({
      rounds: 2,
      decisions: { execute: 1, done: 1, blocked: 0, ask: 0 },
      audits: { total: 1, byStatus: { complete: 1 }, byIntegrity: { clean: 1 }, malformed: 0 },
      integrityViolations: 0,
      records: { completed: 1, pending: 0, blocked: 0, untrusted: 0 },
    });
    const { manager, executor, auditor } = managed.tokensByRole;
    expect([manager.calls, executor.calls, auditor.calls]).toEqual([2, 2, 2]);
    expect(manager.share + executor.share + auditor.share).toBeCloseTo(1);
    expect(result.report.byPurpose.audit?.calls).toBe(2);
  });

  it('keeps a record pending when the executor only claims the work, and tells the manager why', async () => {
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT]), decide('blocked', { reason: 'The executor keeps failing.' })],
      execute: [reply('Done! I wrote report.md with the heading.')],
      audit: [
        toolCall('read_file', { path: 'report.md' }),
        verdictOf('complete', 'clean', [
          {
            recordId: 'report',
            check: 'report.md exists',
            observed: 'read_file: "report.md" does not exist in the workspace',
            verdict: 'fail',
          },
        ]),
      ],
    });
    const run = await managedRun({ backend });
    const result = await run.run();
    const record = result.taskState.records[0];
    expect(record).toMatchObject({
      id: 'report',
      status: 'pending',
      reason: expect.stringContaining('does not exist'),
    });
    expect(textOf(backend.callsFor('manage')[1])).toContain('"report.md" does not exist in the workspace');
    expect(textOf(backend.callsFor('manage')[1])).not.toContain('Done! I wrote report.md');
    expect(result.status).toBe('blocked');
    expect(result.deliverable.files).toEqual([]);
  });

  it('sends "done" with open records back to the manager, naming them', async () => {
    const backend = new ScriptedBackend({
      manage: [decide('done', { records: [REPORT] }), decide('blocked', { reason: 'Cannot write files here.' })],
    });
    const run = await managedRun({ backend });
    const result = await run.run();
    expect(textOf(backend.callsFor('manage')[1])).toMatch(
      /You answered "done", but these records are not completed by a clean audit: report \(pending\)/,
    );
    expect(result.status).toBe('blocked');
    expect(run.events('manager-decision').map((e) => e.next)).toEqual(['done', 'blocked']);
  });

  it('never succeeds on "done" with no records at all', async () => {
    const backend = new ScriptedBackend({ manage: [decide('done'), decide('blocked', { reason: 'nothing to do' })] });
    const result = await (await managedRun({ backend })).run();
    expect(textOf(backend.callsFor('manage')[1])).toContain('the task state has no records');
    expect(result.status).toBe('blocked');
  });

  it('ends "blocked" with the manager\'s and the blocked records\' reasons', async () => {
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT]), decide('blocked', { reason: 'No write access to the share.' })],
      execute: [submit('Permission denied on the share.')],
      audit: [
        verdictOf('blocked', 'clean', [
          { recordId: 'report', check: 'write access', observed: 'the share is read-only', verdict: 'fail' },
        ]),
      ],
    });
    const result = await (await managedRun({ backend })).run();
    expect(result.status).toBe('blocked');
    expect(result.error).toEqual({
      code: 'blocked',
      message: expect.stringContaining('No write access to the share.'),
    });
    expect(result.error?.message).toContain('report: write access: the share is read-only');
    expect(result.taskState.records[0]).toMatchObject({
      status: 'blocked',
      reason: 'write access: the share is read-only',
    });
    expect(result.report.managed.blocked?.reasons[0]).toBe('No write access to the share.');
  });

  it('ends "blocked" with the question in the result when the manager asks and no onAsk is set', async () => {
    const backend = new ScriptedBackend({
      manage: [decide('ask', { records: [REPORT], question: 'Which river first?' })],
    });
    const result = await (await managedRun({ backend })).run();
    expect(result.status).toBe('blocked');
    expect(result.error?.message).toContain('Which river first?');
    expect(result.report.managed.blocked).toEqual({ reasons: [], question: 'Which river first?' });
    expect(result.taskState.records).toHaveLength(1);
  });

  it('puts the question to onAsk and gives the manager the answer as a user message', async () => {
    const asked: Array<{ question: string; state: TaskState }> = [];
    const backend = new ScriptedBackend({
      manage: [
        decide('ask', { records: [REPORT], question: 'Which river first?' }),
        decide('blocked', { reason: 'stop here' }),
      ],
    });
    const run = await managedRun({
      backend,
      options: {
        onAsk: async (question, state) => {
          asked.push({ question, state });
          return 'The Danube.';
        },
      },
    });
    await run.run();
    expect(asked).toEqual([
      {
        question: 'Which river first?',
        state: expect.objectContaining({ round: 1, records: [expect.objectContaining({ id: 'report' })] }),
      },
    ]);
    const messages = backend.callsFor('manage')[1]?.messages ?? [];
    expect(messages.at(-2)).toMatchObject({
      role: 'assistant',
      content: expect.stringContaining('Which river first?'),
    });
    expect(messages.at(-1)).toMatchObject({ role: 'user', content: expect.stringContaining('The Danube.') });
  });

  it('re-asks a malformed manager reply once, then falls back to one record holding the request', async () => {
    const backend = new ScriptedBackend({
      manage: [
        reply('I think we should write the report.'),
        decide('execute', { records: [REPORT] }),
        decide('blocked', { reason: 'enough' }),
      ],
      execute: [toolCall('write_file', { path: 'report.md', content: '# Rivers\n' }), submit('written')],
      audit: [
        verdictOf('complete', 'clean', [
          { recordId: 'request', check: 'report.md exists', observed: '# Rivers', verdict: 'pass' },
        ]),
      ],
    });
    const run = await managedRun({ backend });
    const result = await run.run();
    // The second reply is valid JSON but inconsistent (execute without a contract): it still counts as malformed.
    expect(textOf(backend.callsFor('manage')[1])).toContain('Your reply could not be used');
    const [first] = run.events('manager-decision');
    expect(first).toMatchObject({
      fallback: 'malformed-reply',
      next: 'execute',
      records: [{ id: 'request' }],
      contract: { recordIds: ['request'] },
    });
    expect(result.taskState.records).toEqual([expect.objectContaining({ id: 'request', status: 'completed' })]);
    expect(result.report.managed.managerFallbacks).toBe(1);
  });

  it('counts a malformed audit, after one re-ask, as incomplete and suspect: the records become untrusted', async () => {
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT]), decide('blocked', { reason: 'audits are broken' })],
      execute: [toolCall('write_file', { path: 'report.md', content: '# Rivers\n' }), submit('written')],
      audit: [submit('Looks great to me!'), submit('{"status":"done"}')],
    });
    const run = await managedRun({ backend });
    const result = await run.run();
    expect(textOf(backend.callsFor('audit')[1])).toContain('Your previous verdict could not be used');
    const [audit] = run.events('audit-finish');
    expect(audit).toMatchObject({ status: 'incomplete', integrity: 'suspect', fallback: 'malformed-reply' });
    expect(audit?.state.records[0]).toMatchObject({ status: 'untrusted' });
    expect(result.report.managed.audits.malformed).toBe(1);
    expect(
      run
        .events('llm-request')
        .filter((e) => e.purpose === 'audit')
        .map((e) => e.scope),
    ).toEqual(['audit-1', 'audit-1-reask']);
  });

  it('ends after managed.maxRounds rounds with the state as it stands', async () => {
    const backend = new ScriptedBackend({
      manage: [
        executeRecords([REPORT]),
        decide('execute', { contract: { task: 'Try again.', acceptanceCriteria: ['report.md exists'] } }),
      ],
      execute: [submit('tried'), submit('tried again')],
      audit: [
        verdictOf('incomplete', 'clean', [
          { recordId: 'report', check: 'report.md exists', observed: 'missing', verdict: 'fail' },
        ]),
        verdictOf('incomplete', 'clean', [
          { recordId: 'report', check: 'report.md exists', observed: 'still missing', verdict: 'fail' },
        ]),
      ],
    });
    const run = await managedRun({ backend, options: { maxRounds: 2 } });
    const result = await run.run();
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({
      code: 'budget-exhausted',
      message: expect.stringContaining('managed.maxRounds (2)'),
    });
    expect(result.error?.message).toContain('open records: report');
    expect(result.taskState).toMatchObject({
      round: 2,
      records: [{ status: 'pending', reason: 'report.md exists: still missing' }],
    });
    expect(run.events('run-error')).toHaveLength(1);
    backend.assertComplete();
  });

  it('ends "aborted" mid-round with the state as audited so far, saved', async () => {
    const controller = new AbortController();
    const backend = new ScriptedBackend({ manage: [executeRecords([REPORT])], execute: [toolCall('hang')] });
    const run = await managedRun({ backend, signal: controller.signal, tools: [writeFileTool, hang] });
    run.bus.on('tool-call', (e) => {
      if (e.toolName === 'hang') controller.abort();
    });
    const result = await run.run();
    expect(result.status).toBe('aborted');
    expect(result.error?.code).toBe('aborted');
    expect(run.events('audit-finish')).toHaveLength(0);
    expect(result.taskState).toMatchObject({ round: 1, records: [{ id: 'report', status: 'pending', evidence: [] }] });
    expect(await stateOnDisk(run.workspace)).toEqual(result.taskState);
  });

  it('ends "aborted" during an audit without applying it: a cut-off audit is no evidence', async () => {
    const controller = new AbortController();
    const waitRead = defineTool({ ...hang, name: 'wait_read', readOnly: true });
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT])],
      execute: [toolCall('write_file', { path: 'report.md', content: '# Rivers\n' }), submit('written')],
      audit: [toolCall('wait_read')],
    });
    const run = await managedRun({ backend, signal: controller.signal, tools: [writeFileTool, waitRead] });
    run.bus.on('tool-call', (e) => {
      if (e.toolName === 'wait_read') controller.abort();
    });
    const result = await run.run();
    expect(result.status).toBe('aborted');
    expect(run.events('audit-finish')).toHaveLength(0);
    expect(result.taskState.records[0]).toMatchObject({ status: 'pending', evidence: [] });
    // The execution happened; its file is part of the deliverable, unaudited.
    expect(result.deliverable.files).toEqual(['report.md']);
  });

  it('ends "timeout" when limits.timeoutMs passes, with the state as it stands', async () => {
    const backend = new ScriptedBackend({ manage: [executeRecords([REPORT])], execute: [toolCall('hang')] });
    const run = await managedRun({ backend, tools: [writeFileTool, hang], limits: { timeoutMs: 300 } });
    const result = await run.run();
    expect(result).toMatchObject({ status: 'timeout', error: { code: 'timeout' } });
    expect(result.taskState.records[0]?.status).toBe('pending');
  });

  it('ends "failed" at once on a backend error no retry can cure', async () => {
    const backend = new ScriptedBackend({ manage: [new HarnessError('authentication', 'Incorrect API key')] });
    const run = await managedRun({ backend });
    const result = await run.run();
    expect(result).toMatchObject({ status: 'failed', error: { code: 'authentication' } });
    expect(run.events('run-error')[0]).toMatchObject({ stage: 'manage' });
  });
});

describe('managed run: the state file', () => {
  it('equals the state in the events after every change, and the result', async () => {
    const backend = new ScriptedBackend({
      manage: [
        executeRecords([REPORT, { id: 'notes', description: 'notes.md exists.' }]),
        decide('execute', {
          contract: { task: 'Write notes.md.', acceptanceCriteria: ['notes.md exists'], recordIds: ['notes'] },
        }),
        decide('done'),
      ],
      execute: [
        toolCall('write_file', { path: 'report.md', content: '# Rivers\n' }),
        submit('report written; notes too'),
        toolCall('write_file', { path: 'notes.md', content: 'n' }),
        submit('notes written'),
      ],
      audit: [
        verdictOf('incomplete', 'clean', [
          { recordId: 'report', check: 'report.md', observed: '# Rivers', verdict: 'pass' },
          { recordId: 'notes', check: 'notes.md exists', observed: 'missing', verdict: 'fail' },
        ]),
        verdictOf('complete', 'clean', [
          { recordId: 'notes', check: 'notes.md exists', observed: 'n', verdict: 'pass' },
        ]),
      ],
    });
    const run = await managedRun({ backend });
    const seen: Array<{ type: string; event: TaskState; disk: unknown }> = [];
    const file = path.join(run.workspace.root, '.harness/task-state.json');
    for (const type of ['manager-decision', 'audit-finish'] as const) {
      run.bus.on(type, (e) => seen.push({ type, event: e.state, disk: JSON.parse(readFileSync(file, 'utf8')) }));
    }
    const result = await run.run();
    expect(seen.map((s) => s.type)).toEqual([
      'manager-decision',
      'audit-finish',
      'manager-decision',
      'audit-finish',
      'manager-decision',
    ]);
    for (const { event, disk } of seen) expect(disk).toEqual(event);
    // An incomplete audit completes nothing, even a record it found passing; the second round's clean audit does.
    expect(seen[1]?.event.records.map((r) => r.status)).toEqual(['pending', 'pending']);
    expect(seen[3]?.event.records.map((r) => r.status)).toEqual(['pending', 'completed']);
    expect(result.status).toBe('failed');
    expect(await stateOnDisk(run.workspace)).toEqual(result.taskState);
  });
});

describe('managed run: the executor and what it sees', () => {
  it('gives the executor the request, the contract and the audited state, never an earlier trace or claim', async () => {
    const backend = new ScriptedBackend({
      manage: [
        executeRecords([REPORT]),
        decide('execute', { contract: { task: 'Fix the heading.', acceptanceCriteria: ['heading is # Rivers'] } }),
        decide('blocked', { reason: 'x' }),
      ],
      execute: [
        toolCall('write_file', { path: 'report.md', content: '# Lakes\n' }),
        submit('CLAIM-ONE: all done'),
        submit('fixed'),
      ],
      audit: [
        verdictOf('incomplete', 'clean', [
          { recordId: 'report', check: 'heading', observed: 'AUDITED: heading is "# Lakes"', verdict: 'fail' },
        ]),
        verdictOf('incomplete', 'clean', [
          { recordId: 'report', check: 'heading', observed: 'still "# Lakes"', verdict: 'fail' },
        ]),
      ],
    });
    await (await managedRun({ backend })).run();
    const second = textOf(backend.callsFor('execute')[2]);
    expect(second).toContain(TASK);
    expect(second).toContain('Fix the heading.');
    expect(second).toContain('AUDITED: heading is "# Lakes"');
    expect(second).not.toContain('CLAIM-ONE');
    expect(second).not.toContain('TOOL-TRACE');
    expect(backend.callsFor('execute')[2]?.messages).toHaveLength(2);
  });
});
