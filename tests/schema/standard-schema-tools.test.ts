import * as v from 'valibot';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { z as z3 } from 'zod/v3';
import { createHarness, defineTool, HarnessError, ToolRegistry, type StandardSchemaV1 } from '../../src/index.js';
import { ScriptedBackend, submit, toolCalls } from '../../src/testing/index.js';
import { tempDir } from '../harness/helpers.js';

/** Tools of three schema libraries, each recording the validated input it was called with. */
function libraryTools(seen: Record<string, unknown>) {
  const zod4 = defineTool({
    name: 'zod4_add',
    description: 'Adds two numbers (zod 4).',
    input: z.object({ a: z.number(), b: z.number() }),
    execute: (input) => {
      seen.zod4 = input;
      return String(input.a + input.b);
    },
  });
  const zod3 = defineTool({
    name: 'zod3_greet',
    description: 'Greets someone (zod 3, JSON Schema given beside it).',
    input: z3.object({ name: z3.string().min(1) }),
    jsonSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    execute: (input) => {
      seen.zod3 = input;
      return `Hello, ${input.name}`;
    },
  });
  const valibot = defineTool({
    name: 'valibot_upper',
    description: 'Uppercases a word (Valibot, converted by @valibot/to-json-schema).',
    input: v.object({
      word: v.pipe(
        v.string(),
        v.transform((word) => word.toUpperCase()),
      ),
    }),
    execute: (input) => {
      seen.valibot = input;
      return input.word;
    },
  });
  return [zod4, zod3, valibot];
}

describe('tools of any Standard Schema library', () => {
  it('offers zod 4, zod 3 and Valibot tools in one run, validates each call with its own library', async () => {
    const seen: Record<string, unknown> = {};
    const backend = new ScriptedBackend({
      execute: [
        toolCalls([
          { name: 'zod4_add', args: { a: 2, b: 3 } },
          { name: 'zod3_greet', args: { name: 'Ada' } },
          { name: 'valibot_upper', args: { word: 'owl' } },
          { name: 'valibot_upper', args: { word: 7 } },
          { name: 'zod3_greet', args: { name: '' } },
        ]),
        submit('done'),
      ],
    });
    const harness = createHarness({
      backend,
      tools: libraryTools(seen),
      workspace: await tempDir(),
      decomposition: false,
      verification: false,
    });
    const result = await harness.run('Use every tool once.');
    expect(result.status).toBe('succeeded');
    expect(seen).toEqual({ zod4: { a: 2, b: 3 }, zod3: { name: 'Ada' }, valibot: { word: 'OWL' } });

    const first = backend.calls[0];
    const specs = Object.fromEntries((first?.tools ?? []).map((spec) => [spec.name, spec.inputSchema]));
    expect(specs.zod4_add).toMatchObject({ type: 'object', required: ['a', 'b'] });
    expect(specs.zod3_greet).toEqual({ type: 'object', properties: { name: { type: 'string' } }, required: ['name'] });
    expect(specs.valibot_upper).toMatchObject({ type: 'object', properties: { word: { type: 'string' } } });
    expect(specs.valibot_upper?.$schema).toBeUndefined();

    const observations = (backend.calls[1]?.messages ?? []).filter((m) => m.role === 'tool').map((m) => m.content);
    expect(observations).toEqual([
      expect.stringMatching(/^Output of zod4_add:\n.*\n5\n/),
      expect.stringMatching(/^Output of zod3_greet:\n.*\nHello, Ada\n/),
      expect.stringMatching(/^Output of valibot_upper:\n.*\nOWL\n/),
      expect.stringMatching(/Invalid arguments for tool "valibot_upper":\n- word: Invalid type: Expected string/),
      expect.stringMatching(/Invalid arguments for tool "zod3_greet":\n- name: String must contain at least 1/),
    ]);
  });

  it('converts a zod 3 schema through zod-to-json-schema when it is installed', () => {
    const tool = defineTool({
      name: 'zod3_auto',
      description: 'd',
      input: z3.object({ city: z3.string().describe('City name'), days: z3.number().int().optional() }),
      execute: () => '',
    });
    const [spec] = new ToolRegistry([tool]).specs();
    expect(spec?.inputSchema).toMatchObject({
      type: 'object',
      properties: { city: { type: 'string', description: 'City name' }, days: { type: 'integer' } },
      required: ['city'],
    });
    expect(spec?.inputSchema.$schema).toBeUndefined();
  });

  it('implements ~standard in zod/v3, as the harness relies on', () => {
    const schema = z3.object({ x: z3.string() });
    expect(schema['~standard']).toMatchObject({ version: 1, vendor: 'zod' });
  });

  it('types execute input from any library', () => {
    const tool = defineTool({
      name: 't',
      description: 'd',
      input: v.object({ n: v.pipe(v.string(), v.transform(Number)) }),
      execute: (input) => {
        expectTypeOf(input).toEqualTypeOf<{ n: number }>();
        return String(input.n + 1);
      },
    });
    expectTypeOf(tool.execute).parameter(0).toEqualTypeOf<{ n: number }>();
  });

  it('refuses at definition a schema it cannot convert without jsonSchema, naming the fix', () => {
    const opaque: StandardSchemaV1<{ q: string }> = {
      '~standard': { version: 1, vendor: 'acme', validate: (value) => ({ value: value as { q: string } }) },
    };
    const define = () => defineTool({ name: 'opaque', description: 'd', input: opaque, execute: () => '' });
    expect(define).toThrow(HarnessError);
    expect(define).toThrow(/cannot convert a acme schema to JSON Schema; pass the JSON Schema as "jsonSchema"/);
    const given = defineTool({
      name: 'opaque',
      description: 'd',
      input: opaque,
      jsonSchema: { type: 'object', properties: { q: { type: 'string' } } },
      execute: () => '',
    });
    expect(given.jsonSchema).toEqual({ type: 'object', properties: { q: { type: 'string' } } });
  });

  it('refuses a non-object input schema of any library', () => {
    expect(() => defineTool({ name: 'scalar', description: 'd', input: v.string(), execute: () => '' })).toThrow(
      /tool "scalar": its input must be an object schema/,
    );
  });
});
