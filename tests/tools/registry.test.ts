import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ToolCall } from '../../src/backend/types.js';
import { HarnessError } from '../../src/errors.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { Tool, ToolContext } from '../../src/tools/types.js';
import { stubWorkspace } from '../executor/stub-workspace.js';

const ROOT = '/tmp/ws-root';

function context(signal: AbortSignal = new AbortController().signal): ToolContext {
  const backend = new ScriptedBackend([]);
  return {
    runId: 'run-1',
    context: undefined,
    purpose: 'execute',
    scope: 'subtask-1',
    workspace: stubWorkspace(ROOT),
    signal,
    backendFor: () => backend,
    generate: (role, request) => backend.generate({ ...request, purpose: role }),
    onScopeEnd: () => undefined,
  };
}

const call = (name: string, args: unknown, id = 'c1'): ToolCall => ({
  id,
  name,
  arguments: typeof args === 'string' ? args : JSON.stringify(args),
});

const weather = defineTool({
  name: 'weather',
  description: 'Weather for a city.',
  input: z.object({
    city: z.string().describe('City name'),
    days: z.number().int().min(1).max(7).default(1),
    units: z.object({ temperature: z.enum(['c', 'f']) }).optional(),
    tags: z.array(z.string()).optional(),
  }),
  readOnly: true,
  observation: 'search',
  execute: ({ city, days }) => `${city}: sunny for ${days} day(s)`,
});

function expectRegistrationError(fn: () => unknown, pattern: RegExp) {
  try {
    fn();
  } catch (error) {
    expect(HarnessError.isInstance(error)).toBe(true);
    expect((error as HarnessError).code).toBe('tool-registration');
    expect((error as HarnessError).message).toMatch(pattern);
    return;
  }
  throw new Error('expected a tool-registration error');
}

describe('ToolRegistry registration', () => {
  it('registers tools and answers has/get/list in registration order', () => {
    const other = defineTool({ name: 'other', description: 'x', input: z.object({}), execute: () => '' });
    const registry = new ToolRegistry([weather]).register(other);
    expect(registry.has('weather')).toBe(true);
    expect(registry.has('nope')).toBe(false);
    expect(registry.get('other')).toBe(other);
    expect(registry.list().map((t) => t.name)).toEqual(['weather', 'other']);
  });

  it('rejects a duplicate name, naming it, and registers nothing of that batch', () => {
    const registry = new ToolRegistry([weather]);
    const fresh = defineTool({ name: 'fresh', description: 'x', input: z.object({}), execute: () => '' });
    expectRegistrationError(() => registry.register([fresh, weather]), /"weather" is already registered/);
    expect(registry.has('fresh')).toBe(false);
    expectRegistrationError(() => new ToolRegistry([fresh, fresh]), /"fresh"/);
  });

  it('reserves submit_answer for the executor', () => {
    const fake = { ...weather, name: 'submit_answer' } as Tool;
    expectRegistrationError(() => new ToolRegistry([fake]), /reserved/);
  });

  it('rejects a hand-made tool with a bad name or without a zod schema', () => {
    expectRegistrationError(() => new ToolRegistry([{ ...weather, name: 'has space' } as Tool]), /"has space"/);
    expectRegistrationError(
      () => new ToolRegistry([{ ...weather, input: { parse() {} } } as unknown as Tool]),
      /Standard Schema/,
    );
  });

  it('rejects a tool whose input is not an object schema', () => {
    const scalar = { ...weather, input: z.string() } as unknown as Tool;
    expectRegistrationError(() => new ToolRegistry([scalar]), /object schema/);
  });

  it('validates its options', () => {
    expect(() => new ToolRegistry([], { toolTimeoutMs: 0 })).toThrow(/toolTimeoutMs.*positive integer/);
  });
});

describe('ToolRegistry.specs', () => {
  it('gives each tool as JSON Schema of its input, without $schema', () => {
    const [spec] = new ToolRegistry([weather]).specs();
    expect(spec?.name).toBe('weather');
    expect(spec?.description).toBe('Weather for a city.');
    expect(spec?.inputSchema.$schema).toBeUndefined();
    expect(spec?.inputSchema).toMatchObject({
      type: 'object',
      properties: {
        city: { type: 'string', description: 'City name' },
        days: { type: 'integer', minimum: 1, maximum: 7, default: 1 },
      },
      required: ['city'],
    });
  });

  it('returns copies that callers cannot corrupt', () => {
    const registry = new ToolRegistry([weather]);
    registry.specs()[0]!.inputSchema.type = 'string';
    expect(registry.specs()[0]!.inputSchema.type).toBe('object');
  });
});

describe('ToolRegistry.invoke', () => {
  const registry = new ToolRegistry([weather]);

  it('runs a valid call with the parsed input, defaults applied', async () => {
    const result = await registry.invoke(call('weather', { city: 'Oslo' }), context());
    expect(result).toMatchObject({
      callId: 'c1',
      toolName: 'weather',
      text: 'Oslo: sunny for 1 day(s)',
      isError: false,
      files: [],
      images: [],
      observation: 'search',
    });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('treats empty arguments as an empty object', async () => {
    const ping = defineTool({ name: 'ping', description: 'x', input: z.object({}), execute: () => 'pong' });
    const result = await new ToolRegistry([ping]).invoke(call('ping', ''), context());
    expect(result).toMatchObject({ isError: false, text: 'pong' });
  });

  it('turns bad JSON into an error observation quoting the parse error and the raw text', async () => {
    const result = await registry.invoke(call('weather', '{"city": "Oslo"'), context());
    expect(result.isError).toBe(true);
    expect(result.text).toContain('not valid JSON');
    expect(result.text).toMatch(/JSON|position|Expected/);
    expect(result.text).toContain(JSON.stringify('{"city": "Oslo"'));
  });

  it('names each failing field path, the expected type and what was received', async () => {
    const result = await registry.invoke(
      call('weather', { days: 'three', units: { temperature: 'kelvin' }, tags: ['ok', 7] }),
      context(),
    );
    expect(result.isError).toBe(true);
    expect(result.text).toContain('- city: expected string, received nothing (the field is missing)');
    expect(result.text).toContain('- days: expected number, received string "three"');
    expect(result.text).toMatch(/- units\.temperature: .*"c".*"f".*received string "kelvin"/);
    expect(result.text).toContain('- tags[1]: expected string, received number 7');
  });

  it('checks schemas with async refinements, naming the failing field', async () => {
    const lookup = defineTool({
      name: 'lookup',
      description: 'x',
      input: z.object({ id: z.string().refine(async (id) => id.startsWith('u-'), 'must start with "u-"') }),
      execute: ({ id }) => `found ${id}`,
    });
    const registry = new ToolRegistry([lookup]);
    expect(await registry.invoke(call('lookup', { id: 'u-1' }), context())).toMatchObject({
      isError: false,
      text: 'found u-1',
    });
    const bad = await registry.invoke(call('lookup', { id: 'x' }), context());
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain('- id: must start with "u-", received string "x"');
  });

  it('turns a schema that throws while checking into an error observation instead of rejecting', async () => {
    const fragile = defineTool({
      name: 'fragile',
      description: 'x',
      input: z.object({ n: z.number() }).transform(() => {
        throw new Error('transform bug');
      }),
      execute: () => 'never',
    });
    const result = await new ToolRegistry([fragile]).invoke(call('fragile', { n: 1 }), context());
    expect(result).toMatchObject({ isError: true, text: 'Tool "fragile" could not check its input: transform bug' });
  });

  it('lists the available tools for an unknown tool', async () => {
    const result = await registry.invoke(call('wether', {}), context(), { alsoAvailable: ['submit_answer'] });
    expect(result.isError).toBe(true);
    expect(result.text).toBe(
      'Unknown tool "wether". Available tools: weather, submit_answer. Call one of these by its exact name.',
    );
  });

  it('turns a throwing tool into an error observation with its message', async () => {
    const broken = defineTool({
      name: 'broken',
      description: 'x',
      input: z.object({}),
      execute: () => {
        throw new Error('disk full');
      },
    });
    const result = await new ToolRegistry([broken]).invoke(call('broken', {}), context());
    expect(result).toMatchObject({ isError: true, text: 'Tool "broken" failed: disk full' });
  });

  it('stops a tool that exceeds its timeout and aborts its signal', async () => {
    let seen: AbortSignal | undefined;
    const slow = defineTool({
      name: 'slow',
      description: 'x',
      input: z.object({}),
      timeoutMs: 15,
      execute: (_input, ctx) => {
        seen = ctx.signal;
        return new Promise<string>(() => undefined);
      },
    });
    const result = await new ToolRegistry([slow], { toolTimeoutMs: 60_000 }).invoke(call('slow', {}), context());
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/timed out after 15 ms/);
    expect(seen?.aborted).toBe(true);
  });

  it('uses the registry timeout, or the per-call one, for tools without their own', async () => {
    const slow = defineTool({
      name: 'slow',
      description: 'x',
      input: z.object({}),
      execute: () => new Promise<string>(() => undefined),
    });
    const viaRegistry = await new ToolRegistry([slow], { toolTimeoutMs: 10 }).invoke(call('slow', {}), context());
    expect(viaRegistry.text).toMatch(/after 10 ms/);
    const viaCall = await new ToolRegistry([slow], { toolTimeoutMs: 60_000 }).invoke(call('slow', {}), context(), {
      timeoutMs: 12,
    });
    expect(viaCall.text).toMatch(/after 12 ms/);
  });

  it('stops a running tool when the caller aborts', async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const slow = defineTool({
      name: 'slow',
      description: 'x',
      input: z.object({}),
      execute: (_input, ctx) => {
        seen = ctx.signal;
        setTimeout(() => controller.abort(), 1);
        return new Promise<string>(() => undefined);
      },
    });
    const result = await new ToolRegistry([slow]).invoke(call('slow', {}), context(controller.signal));
    expect(result).toMatchObject({ isError: true });
    expect(result.text).toMatch(/aborted/);
    expect(seen?.aborted).toBe(true);
  });

  it('normalizes returned files to workspace-relative paths and drops ones outside', async () => {
    const writer = defineTool({
      name: 'writer',
      description: 'x',
      input: z.object({}),
      execute: () => ({
        text: 'wrote',
        files: ['./a.txt', 'dir\\b.txt', `${ROOT}/c/d.txt`, 'a.txt', '../escape.txt', '/etc/passwd'],
      }),
    });
    const result = await new ToolRegistry([writer]).invoke(call('writer', {}), context());
    expect(result.isError).toBe(false);
    expect(result.files).toEqual(['a.txt', 'dir/b.txt', 'c/d.txt']);
    expect(result.text).toContain('Ignored file paths outside the workspace: ../escape.txt, /etc/passwd');
  });

  it('reports a tool that returns something other than a string or { text }', async () => {
    const odd = { ...weather, name: 'odd', execute: () => 42 } as unknown as Tool;
    const result = await new ToolRegistry([odd]).invoke(call('odd', { city: 'x' }), context());
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/invalid result/);
  });
});
