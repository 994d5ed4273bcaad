import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Auditor,
  MANAGED_DEFAULTS,
  Manager,
  ManagedOptionsSchema,
  parseManagedOptions,
  type AuditorLike,
  type ManagerLike,
} from '../../src/modes/managed/index.js';
import { DataMark } from '../../src/prompts/datamark.js';
import { reply, ScriptedBackend, submit, toolCall } from '../../src/testing/index.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { probeBwrap } from '../../src/tools/builtin/sandbox.js';
import { LocalWorkspace } from '../../src/workspace/local-workspace.js';
import { textOf } from '../harness/helpers.js';
import { decide, executeRecords, managedRun, tempDir, verdictOf, writeFileTool } from './helpers.js';

const REPORT = { id: 'report', description: 'report.md exists.' };

describe('managed options', () => {
  it('fills every default and rejects what is out of range, naming the option', () => {
    const parsed = ManagedOptionsSchema.parse({});
    expect(parsed).toMatchObject({
      maxRounds: MANAGED_DEFAULTS.maxRounds,
      executorIterations: MANAGED_DEFAULTS.executorIterations,
      auditorIterations: MANAGED_DEFAULTS.auditorIterations,
      agents: {},
      components: {},
      prompts: {},
    });
    expect(MANAGED_DEFAULTS.maxRounds).toBe(20);
    expect(() => parseManagedOptions({ maxRounds: 0 })).toThrow(/`managed\.maxRounds`/);
    expect(() => parseManagedOptions({ agents: { executor: {} as never } })).toThrow(/`managed\.agents\.executor`/);
    expect(() => parseManagedOptions({ maxRound: 3 } as never)).toThrow(/did you mean `managed\.maxRounds`/);
  });
});

describe('Manager and Auditor on their own', () => {
  it("Manager resolves a contract's records to the open ones when it names none", async () => {
    const backend = new ScriptedBackend({
      manage: [
        reply(
          JSON.stringify({
            records: [REPORT],
            next: 'execute',
            contract: { task: 'Write it.', acceptanceCriteria: ['exists'] },
          }),
        ),
      ],
    });
    const manager = new Manager({ backend, prompt: 'CUSTOM MANAGER PROMPT' });
    const mark = new DataMark('0123456789abcdef');
    const { decision } = await manager.decide({
      runId: 'r',
      round: 1,
      request: 'Write report.md',
      attachments: ['attachments/data.csv'],
      state: { records: [], round: 0 },
      audits: [],
      answers: [],
      feedback: [],
      dataMark: mark,
    });
    expect(decision).toEqual({
      records: [REPORT],
      next: 'execute',
      contract: { task: 'Write it.', acceptanceCriteria: ['exists'], boundaries: [], recordIds: ['report'] },
    });
    expect(backend.calls[0]?.messages[0]).toEqual({ role: 'system', content: mark.withRule('CUSTOM MANAGER PROMPT') });
    expect(textOf(backend.calls[0])).toContain(
      `Attached files, in the workspace: ${mark.inline('attachments/data.csv')}`,
    );
  });

  it('Auditor refuses tools that are not read-only and needs a backend for its built-in loop', () => {
    expect(() => new Auditor({ backend: new ScriptedBackend([]), tools: [writeFileTool] })).toThrow(
      /read-only; these are not: write_file/,
    );
    expect(() => new Auditor({})).toThrow(/needs `backend`/);
  });

  it('Auditor reads the workspace with its built-in read-only tools and returns the verdict', async () => {
    const workspace = await LocalWorkspace.create({ dir: await tempDir() });
    await writeFile(path.join(workspace.root, 'report.md'), '# Rivers\n');
    const backend = new ScriptedBackend({
      audit: [
        toolCall('list_files', {}),
        reply(
          JSON.stringify({
            status: 'complete',
            integrity: 'clean',
            findings: [{ recordId: 'report', check: 'exists', observed: 'report.md', verdict: 'pass' }],
          }),
        ),
      ],
    });
    const auditor = new Auditor({ backend });
    const outcome = await auditor.audit({
      runId: 'r',
      round: 1,
      request: 'Write report.md',
      attachments: [],
      state: { records: [{ id: 'report', description: 'exists', status: 'pending', evidence: [] }], round: 1 },
      contract: { task: 'Write it.', acceptanceCriteria: ['exists'], boundaries: [], recordIds: ['report'] },
      claim: { agent: 'harness', status: 'done', summary: 'wrote it', files: [] },
      changedByExecutor: ['report.md'],
      workspace,
    });
    expect(outcome).toEqual({
      verdict: {
        status: 'complete',
        integrity: 'clean',
        findings: [{ recordId: 'report', check: 'exists', observed: 'report.md', verdict: 'pass' }],
      },
      iterations: 2,
    });
    const listing = backend.calls[1]?.messages.at(-1);
    expect(listing).toMatchObject({ role: 'tool', content: expect.stringContaining('report.md  (9 bytes)') });
  });
});

describe('replacement components', () => {
  it('a replacement auditor is fingerprinted too: what it changes is a violation', async () => {
    const meddler: AuditorLike = {
      async audit(input) {
        await writeFile(path.join(input.workspace.root, 'report.md'), 'rewritten by the auditor');
        return {
          verdict: {
            status: 'complete',
            integrity: 'clean',
            findings: [{ check: 'exists', observed: 'yes', verdict: 'pass' }],
          },
          iterations: 0,
        };
      },
    };
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT]), decide('blocked', { reason: 'x' })],
      execute: [toolCall('write_file', { path: 'report.md', content: '# Rivers' }), submit('done')],
    });
    const run = await managedRun({ backend, options: { components: { auditor: meddler } } });
    const result = await run.run();
    expect(run.events('integrity-violation')[0]?.changedPaths).toEqual(['report.md']);
    expect(result.taskState.records[0]?.status).toBe('untrusted');
  });

  it('a replacement manager decides; a replacement that executes without a contract fails the run clearly', async () => {
    const decisions: ManagerLike = {
      async decide(input) {
        return input.round === 1
          ? { decision: { records: [REPORT], next: 'execute' } }
          : { decision: { records: [], next: 'done' } };
      },
    };
    const run = await managedRun({ backend: new ScriptedBackend({}), options: { components: { manager: decisions } } });
    const result = await run.run();
    expect(result).toMatchObject({
      status: 'failed',
      error: { code: 'invalid-input', message: expect.stringContaining('without a contract') },
    });
  });

  it("uses prompts.audit as the built-in auditor's instructions", async () => {
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT]), decide('blocked', { reason: 'x' })],
      execute: [submit('done')],
      audit: [verdictOf('incomplete', 'clean', [{ check: 'exists', observed: 'no', verdict: 'fail' }])],
    });
    const run = await managedRun({ backend, options: { prompts: { audit: 'CUSTOM AUDIT RULES' } } });
    await run.run();
    const system = backend.callsFor('audit')[0]?.messages[0];
    expect(system).toMatchObject({
      role: 'system',
      content: expect.stringMatching(/^CUSTOM AUDIT RULES\n\n.*submit_answer/s),
    });
  });
});

describe('tools given to the auditor', () => {
  it('excludes every host tool that is not read-only', async () => {
    const search = defineTool({
      name: 'lookup',
      description: 'Looks up.',
      input: z.object({}),
      readOnly: true,
      execute: () => 'x',
    });
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT]), decide('blocked', { reason: 'x' })],
      execute: [submit('done')],
      audit: [verdictOf('incomplete', 'clean', [{ check: 'exists', observed: 'no', verdict: 'fail' }])],
    });
    await (await managedRun({ backend, tools: [writeFileTool, search] })).run();
    expect((backend.callsFor('execute')[0]?.tools ?? []).map((t) => t.name).sort()).toEqual([
      'lookup',
      'submit_answer',
      'write_file',
    ]);
    // Plus the harness's read-only command tool where the sandbox can mount the workspace read-only.
    expect((backend.callsFor('audit')[0]?.tools ?? []).map((t) => t.name).sort()).toEqual([
      ...(probeBwrap().available ? ['execute_command'] : []),
      'list_files',
      'lookup',
      'read_file',
      'submit_answer',
    ]);
  });
});
