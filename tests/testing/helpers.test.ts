import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AuditVerdict, createHarness, defineTool, functionAgent, writeToFileTool } from '../../src/index.js';
import {
  ScriptedBackend,
  auditVerdict,
  createToolContext,
  externalAuditOutput,
  managerDecision,
  reply,
  submit,
  toolCall,
  verdict,
} from '../../src/testing/index.js';
import { tempDir } from '../harness/helpers.js';

const REPORT = { id: 'report', description: 'report.md exists' };
const PASS: AuditVerdict = {
  status: 'complete',
  integrity: 'clean',
  findings: [{ recordId: 'report', check: 'report.md exists', observed: '# R', verdict: 'pass' }],
};

describe('createToolContext', () => {
  it('runs a tool alone in a temporary workspace, and dispose() removes it', async () => {
    const ctx = await createToolContext();
    const tool = writeToFileTool();
    const output = await tool.execute({ path: 'notes/a.md', content: '# A' }, ctx);
    expect(JSON.stringify(output)).toContain('notes/a.md');
    expect(await readFile(path.join(ctx.workspace.root, 'notes/a.md'), 'utf8')).toBe('# A');
    await ctx.dispose();
    expect(existsSync(ctx.workspace.root)).toBe(false);
  });

  it('keeps a workspace directory it was given, runs onScopeEnd cleanups, calls generate on the backend given', async () => {
    const dir = await tempDir();
    const backend = new ScriptedBackend({ summarize: [reply('a summary')] });
    const ended: string[] = [];
    const summarise = defineTool({
      name: 'summarise',
      description: 'Summarises a text with the summarize role.',
      input: z.object({ text: z.string() }),
      execute: async ({ text }, context) => {
        context.onScopeEnd(() => {
          ended.push(context.scope);
        });
        const result = await context.generate('summarize', { messages: [{ role: 'user', content: text }] });
        return result.message.content;
      },
    });
    const ctx = await createToolContext({ workspace: dir, backend, scope: 'subtask-2' });
    expect(await summarise.execute({ text: 'long text' }, ctx)).toBe('a summary');
    expect(backend.callsFor('summarize')).toHaveLength(1);
    await ctx.dispose();
    expect(ended).toEqual(['subtask-2']);
    expect(existsSync(dir)).toBe(true);
  });

  it('without a backend, a tool asking for one gets an error that says what to pass', async () => {
    const ctx = await createToolContext();
    try {
      expect(() => ctx.backendFor('vision')).toThrow(/pass \{ backend \}/);
      await expect(ctx.generate('summarize', { messages: [] })).rejects.toThrow(/pass \{ backend \}/);
    } finally {
      await ctx.dispose();
    }
  });
});

describe('managed reply builders', () => {
  it('managerDecision and auditVerdict script a whole managed run', async () => {
    const backend = new ScriptedBackend({
      manage: [
        managerDecision('execute', {
          records: [REPORT],
          contract: { task: 'Write report.md.', acceptanceCriteria: ['report.md exists'] },
        }),
        managerDecision('done', { answer: 'report.md is written.' }),
      ],
      execute: [toolCall('write_to_file', { path: 'report.md', content: '# R' }), submit('Wrote report.md.')],
      audit: [toolCall('read_file', { path: 'report.md' }), auditVerdict(PASS)],
      verify: [verdict(true)],
    });
    const harness = createHarness({ backend, tools: [writeToFileTool()], workspace: await tempDir(), mode: 'managed' });
    const result = await harness.run('Write report.md.');
    expect(result.status, JSON.stringify(result.error)).toBe('succeeded');
    expect(result.taskState?.records).toMatchObject([{ id: 'report', status: 'completed' }]);
    backend.assertComplete();
  });

  it("externalAuditOutput answers an external auditor's prompt with the verdict block its nonce names", async () => {
    const prompts: string[] = [];
    const auditor = functionAgent(({ prompt }) => {
      prompts.push(prompt);
      return { status: 'done', output: externalAuditOutput(prompt, PASS) };
    });
    const backend = new ScriptedBackend({
      manage: [
        managerDecision('execute', {
          records: [REPORT],
          contract: { task: 'Write report.md.', acceptanceCriteria: ['report.md exists'] },
        }),
        managerDecision('done'),
      ],
      execute: [toolCall('write_to_file', { path: 'report.md', content: '# R' }), submit('Wrote report.md.')],
      verify: [verdict(true)],
    });
    const harness = createHarness({
      backend,
      tools: [writeToFileTool()],
      workspace: await tempDir(),
      mode: 'managed',
      managed: { agents: { auditor } },
    });
    const result = await harness.run('Write report.md.');
    expect(prompts).toHaveLength(1);
    expect(result.status, JSON.stringify(result.error)).toBe('succeeded');
    expect(() => externalAuditOutput('no marker here', PASS)).toThrow(/VERDICT-<nonce>/);
  });
});
