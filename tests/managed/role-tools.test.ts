/**
 * Each managed role gets its own tools: the executor its tool set, the auditor read-only ones (with a read-only
 * command tool where the sandbox exists), and no role of a later round sees an earlier executor's trace.
 */
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import type { GenerateRequest } from '../../src/backend/types.js';
import { createHarness } from '../../src/index.js';
import { ScriptedBackend, submit, toolCall, verdict } from '../../src/testing/index.js';
import { readFileTool } from '../../src/tools/builtin/read-file.js';
import { probeBwrap } from '../../src/tools/builtin/sandbox.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { tempDir, textOf } from '../harness/helpers.js';
import { decide, executeRecords, verdictOf, writeFileTool } from './helpers.js';

const TASK = 'Write report.md with the heading "# Rivers".';
const REPORT = { id: 'report', description: 'report.md starts with "# Rivers"' };
const MARK = 'EXECUTOR-TRACE-7f3a';

/** A tool whose long output the memory cuts and saves under .harness/outputs/. */
const dump = defineTool({
  name: 'dump',
  description: 'Prints a long listing.',
  input: z.object({}),
  readOnly: true,
  execute: async () => `${MARK}\n${'line of output\n'.repeat(2_000)}`,
});

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks something up.',
  input: z.object({}),
  readOnly: true,
  execute: async () => 'found',
});

const names = (request: GenerateRequest | undefined) => (request?.tools ?? []).map((t) => t.name).sort();
const ofPurpose = (backend: ScriptedBackend, purpose: string) => backend.calls.filter((c) => c.purpose === purpose);
const toolResults = (request: GenerateRequest | undefined) =>
  (request?.messages ?? [])
    .filter((m) => m.role === 'tool')
    .map((m) => (typeof m.content === 'string' ? m.content : ''));

describe('managed roles see no earlier trace', () => {
  it("neither the auditor nor a later executor can read an executor's saved tool output", async () => {
    const backend = new ScriptedBackend({
      manage: [
        executeRecords([REPORT]),
        decide('execute', {
          contract: {
            task: 'Fix report.md.',
            acceptanceCriteria: ['report.md starts with "# Rivers"'],
            recordIds: ['report'],
          },
        }),
        decide('blocked', { reason: 'stop here' }),
      ],
      execute: [
        toolCall('dump', {}),
        toolCall('write_file', { path: 'report.md', content: '# Rivers\n' }),
        submit('wrote report.md'),
        // Round 2: the next executor goes looking for the earlier trace.
        toolCall('read_file', { path: '.harness/outputs/execute-1.txt' }),
        submit('nothing to fix'),
      ],
      audit: [
        toolCall('read_file', { path: '.harness/outputs/execute-1.txt' }),
        toolCall('list_files', { path: '.harness/outputs' }),
        verdictOf('incomplete', 'clean', [{ recordId: 'report', check: 'c', observed: 'o', verdict: 'fail' }]),
        verdictOf('incomplete', 'clean', [{ recordId: 'report', check: 'c', observed: 'o', verdict: 'fail' }]),
      ],
    });
    const dir = await tempDir();
    const harness = createHarness({
      backend,
      tools: [writeFileTool, dump, readFileTool()],
      workspace: dir,
      mode: 'managed',
    });
    const result = await harness.run(TASK);
    expect(result.status).toBe('blocked');
    // The executor's own loop saw the cut output, with the marker, in its round.
    expect(textOf(ofPurpose(backend, 'execute')[1])).toContain(MARK);
    const audit = ofPurpose(backend, 'audit');
    const [read, list] = toolResults(audit[2]);
    expect(read).not.toContain(MARK);
    expect(read).toMatch(/not exist|no such file|not found/i);
    expect(list).not.toContain('execute-1');
    const laterExecutor = ofPurpose(backend, 'execute').at(-1);
    expect(textOf(laterExecutor)).toContain('.harness/outputs/execute-1.txt');
    expect(toolResults(laterExecutor).join('\n')).not.toContain(MARK);
  });
});

describe('managed.executorTools and managed.auditorTools', () => {
  it('gives each role the tools the host chose for it', async () => {
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT]), decide('done', { answer: 'report.md is written.' })],
      execute: [toolCall('write_file', { path: 'report.md', content: '# Rivers\n' }), submit('wrote report.md')],
      audit: [
        verdictOf('complete', 'clean', [{ recordId: 'report', check: 'c', observed: '# Rivers', verdict: 'pass' }]),
      ],
      verify: [verdict(true)],
    });
    const harness = createHarness({
      backend,
      tools: [writeFileTool, dump, lookup],
      workspace: await tempDir(),
      mode: 'managed',
      managed: { executorTools: [writeFileTool], auditorTools: [lookup] },
    });
    const result = await harness.run(TASK);
    expect(result.status).toBe('succeeded');
    expect(names(ofPurpose(backend, 'execute')[0])).toEqual(['submit_answer', 'write_file']);
    expect(names(ofPurpose(backend, 'audit')[0])).toEqual(['list_files', 'lookup', 'read_file', 'submit_answer']);
  });

  it('refuses an auditor tool that is not read-only when the harness is made', () => {
    const backend = new ScriptedBackend([]);
    expect(() => createHarness({ backend, mode: 'managed', managed: { auditorTools: [writeFileTool] } })).toThrow(
      /auditorTools.*read-only[\s\S]*write_file|write_file[\s\S]*read-only/,
    );
  });

  it('tells the auditor without a command tool that command criteria cannot be verified, and the manager too', async () => {
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT]), decide('blocked', { reason: 'stop here' })],
      execute: [submit('nothing')],
      audit: [verdictOf('incomplete', 'clean', [{ recordId: 'report', check: 'c', observed: 'o', verdict: 'fail' }])],
    });
    const harness = createHarness({
      backend,
      tools: [writeFileTool],
      workspace: await tempDir(),
      mode: 'managed',
      managed: { auditorTools: [] },
    });
    await harness.run(TASK);
    const audit = ofPurpose(backend, 'audit')[0];
    expect(names(audit)).not.toContain('execute_command');
    expect(textOf(audit)).toMatch(/no command tool[\s\S]*unverifi/i);
    expect(textOf(ofPurpose(backend, 'manage')[0])).toMatch(/auditor cannot run commands/i);
  });
});

const bwrap = probeBwrap();

describe.skipIf(!bwrap.available)(`the auditor's read-only command tool (${bwrap.reason})`, () => {
  it('runs commands on a read-only workspace without the harness folder, and writes nothing', async () => {
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT]), decide('done', { answer: 'report.md is written.' })],
      execute: [toolCall('write_file', { path: 'report.md', content: '# Rivers\n' }), submit('wrote report.md')],
      audit: [
        toolCall('execute_command', { command: 'head -1 report.md' }),
        toolCall('execute_command', { command: 'echo changed > report.md; touch new.txt' }),
        toolCall('execute_command', { command: 'ls -A .harness | wc -l' }),
        verdictOf('complete', 'clean', [
          { recordId: 'report', check: 'head -1 report.md', observed: '# Rivers', verdict: 'pass' },
        ]),
      ],
      verify: [verdict(true)],
    });
    const dir = await tempDir();
    // The host gives no shell at all: the auditor's command tool is the harness's own.
    const harness = createHarness({ backend, tools: [writeFileTool], workspace: dir, mode: 'managed' });
    const events: string[] = [];
    harness.on('integrity-violation', (e) => events.push(e.changedPaths.join(',')));
    const result = await harness.run(TASK);
    const audit = ofPurpose(backend, 'audit');
    expect(names(audit[0])).toContain('execute_command');
    const [head, write, hidden] = toolResults(audit[3]);
    expect(head).toContain('# Rivers');
    expect(write).toMatch(/Read-only file system/);
    expect(hidden).toMatch(/^0$/m);
    expect(events).toEqual([]);
    expect(result.status).toBe('succeeded');
  }, 60_000);
});
