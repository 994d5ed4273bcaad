import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { HarnessError } from '../../src/errors.js';
import { defineTool } from '../../src/tools/define-tool.js';
import type { Tool, ToolContext, ToolOutput } from '../../src/tools/types.js';

const base = { description: 'A tool.', input: z.object({ n: z.number() }), execute: () => 'ok' };

describe('defineTool', () => {
  it('infers the input type from the schema', () => {
    const tool = defineTool({
      name: 'square',
      description: 'Squares n.',
      input: z.object({ n: z.number(), label: z.string().default('x') }),
      execute: (input, ctx) => {
        expectTypeOf(input).toEqualTypeOf<{ n: number; label: string }>();
        expectTypeOf(ctx).toEqualTypeOf<ToolContext>();
        return String(input.n ** 2);
      },
    });
    expectTypeOf(tool).toEqualTypeOf<Tool<{ n: number; label: string }>>();
    expectTypeOf(tool.execute).returns.toEqualTypeOf<ToolOutput | Promise<ToolOutput>>();
  });

  it('fills defaults: not read-only, text observation, no own timeout', () => {
    const tool = defineTool({ name: 'a', ...base });
    expect(tool.readOnly).toBe(false);
    expect(tool.observation).toBe('text');
    expect(tool.timeoutMs).toBeUndefined();
  });

  it('keeps readOnly, observation and timeoutMs', () => {
    const tool = defineTool({ name: 'b', ...base, readOnly: true, observation: 'file', timeoutMs: 500 });
    expect(tool).toMatchObject({ readOnly: true, observation: 'file', timeoutMs: 500 });
  });

  it.each(['', 'has space', 'dot.name', 'x'.repeat(65), 'ünïcode'])('rejects the name %j', (name) => {
    expect(() => defineTool({ name, ...base })).toThrow(/option "name"/);
  });

  it.each(['snake_case', 'kebab-case', 'Mixed09', 'x'.repeat(64)])('accepts the name %j', (name) => {
    expect(defineTool({ name, ...base }).name).toBe(name);
  });

  it('rejects a bad definition with invalid-options naming the field', () => {
    const attempts: Array<[() => unknown, RegExp]> = [
      [() => defineTool({ name: 'a', ...base, description: ' ' }), /"description"/],
      [() => defineTool({ name: 'a', ...base, timeoutMs: 0 }), /"timeoutMs".*positive integer/],
      [() => defineTool({ name: 'a', ...base, input: {} as never }), /"input".*zod/],
      [() => defineTool({ name: 'a', ...base, observation: 'audio' as never }), /"observation"/],
    ];
    for (const [attempt, pattern] of attempts) {
      try {
        attempt();
        throw new Error('expected defineTool to throw');
      } catch (error) {
        expect(HarnessError.isInstance(error)).toBe(true);
        expect((error as HarnessError).code).toBe('invalid-options');
        expect((error as HarnessError).message).toMatch(pattern);
      }
    }
  });

  it('calls the given execute with input and context', async () => {
    const seen: unknown[] = [];
    const tool = defineTool({
      name: 'c',
      description: 'x',
      input: z.object({ n: z.number() }),
      execute: (input, ctx) => {
        seen.push(input, ctx.scope);
        return { text: 'done', files: ['f.txt'] };
      },
    });
    const output = await tool.execute({ n: 2 }, { scope: 'subtask-3' } as ToolContext);
    expect(output).toEqual({ text: 'done', files: ['f.txt'] });
    expect(seen).toEqual([{ n: 2 }, 'subtask-3']);
  });
});

describe('defineTool warnings', () => {
  it('keeps warnings for the run-start event and rejects non-string ones', () => {
    const base = { name: 'shell', description: 'Runs commands.', input: z.object({}), execute: () => 'ok' };
    expect(defineTool({ ...base, warnings: ['runs without a sandbox'] }).warnings).toEqual(['runs without a sandbox']);
    expect(defineTool(base).warnings).toBeUndefined();
    expect(() => defineTool({ ...base, warnings: [42 as unknown as string] })).toThrow(/warnings/);
  });
});
