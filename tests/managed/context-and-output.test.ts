/** Managed mode: the app's run context reaches the executor's and the auditor's tool calls; typed results work too. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createHarness, defineTool, type ToolContext } from '../../src/index.js';
import { ScriptedBackend, reply, toolCall, verdict } from '../../src/testing/index.js';
import { decide, executeRecords, tempDir, verdictOf } from './helpers.js';

const REPORT = { id: 'report', description: 'report.md exists with the heading "# Rivers"' };

describe('managed mode with context and output', () => {
  it('hands the context to executor and auditor tools, and returns the typed result', async () => {
    const seen: string[] = [];
    const write = defineTool({
      name: 'write_report',
      description: 'Writes report.md.',
      input: z.object({ content: z.string() }),
      execute: async ({ content }, ctx: ToolContext<{ tenant: string }>) => {
        seen.push(`write:${ctx.context.tenant}:${ctx.scope}`);
        await ctx.workspace.writeFile('report.md', content, { tool: 'write_report', scope: ctx.scope });
        return { text: 'written', files: ['report.md'] };
      },
    });
    const peek = defineTool({
      name: 'peek',
      description: 'Reads report.md.',
      input: z.object({}),
      readOnly: true,
      execute: async (_input, ctx: ToolContext<{ tenant: string }>) => {
        seen.push(`peek:${ctx.context.tenant}`);
        return (await ctx.workspace.readFile('report.md')).toString('utf8');
      },
    });
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT]), decide('done')],
      execute: [toolCall('write_report', { content: '# Rivers' }), reply('Wrote report.md.')],
      audit: [
        toolCall('peek'),
        verdictOf('complete', 'clean', [
          { recordId: 'report', check: 'report.md exists', observed: '# Rivers', verdict: 'pass' },
        ]),
      ],
      verify: [verdict(true)],
      synthesize: [reply('{"heading":"Rivers"}')],
    });
    const harness = createHarness<{ tenant: string }>({
      backend,
      tools: [write, peek],
      workspace: await tempDir(),
      mode: 'managed',
    });
    const result = await harness.run({
      task: 'Write report.md with the heading "# Rivers".',
      context: { tenant: 'acme' },
      output: z.object({ heading: z.string() }),
    });
    expect(result.status).toBe('succeeded');
    expect(seen).toEqual([expect.stringMatching(/^write:acme:/), 'peek:acme']);
    expect(result.output).toEqual({ heading: 'Rivers' });
    expect(backend.calls.at(-1)?.purpose).toBe('synthesize');
    expect(result.report.byPurpose.synthesize?.calls).toBe(1);
  });
});
