/**
 * `run({ task, output: schema })`: the answer also as a value validated against the app's schema (any Standard
 * Schema library), asked for with the JSON Schema, re-asked once, and never invented when it still fails.
 */
import * as v from 'valibot';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { createHarness, type HarnessEvent } from '../../src/index.js';
import { ScriptedBackend, reply, submit, verdict } from '../../src/testing/index.js';
import { tempDir, textOf } from './helpers.js';

const City = z.object({ city: z.string(), population: z.number().int() });
const ANSWER = 'The capital of France is Paris, with about 2 100 000 inhabitants.';

async function harnessFor(backend: ScriptedBackend, verification = false) {
  const harness = createHarness({ backend, workspace: await tempDir(), decomposition: false, verification });
  const events: HarnessEvent[] = [];
  harness.onAny((event) => events.push(event));
  return { harness, events };
}

describe('run({ output })', () => {
  it('returns the answer as a value of the schema, typed from it, asked for with its JSON Schema', async () => {
    const backend = new ScriptedBackend({
      execute: [submit(ANSWER)],
      synthesize: [reply('{"city":"Paris","population":2100000}')],
    });
    const { harness } = await harnessFor(backend);
    const result = await harness.run({ task: 'What is the capital of France?', output: City });

    expect(result.status).toBe('succeeded');
    expect(result.output).toEqual({ city: 'Paris', population: 2_100_000 });
    expect(result.outputError).toBeUndefined();
    expectTypeOf(result.output).toEqualTypeOf<{ city: string; population: number } | undefined>();
    const asked = backend.calls.at(-1);
    expect(asked?.purpose).toBe('synthesize');
    expect(asked?.responseFormat).toMatchObject({
      type: 'json',
      schema: { type: 'object', required: ['city', 'population'] },
    });
    expect(textOf(asked)).toContain(ANSWER);
  });

  it('re-asks once quoting what failed, then accepts a value that passes', async () => {
    const backend = new ScriptedBackend({
      execute: [submit(ANSWER)],
      synthesize: [
        reply('{"city":"Paris","population":"about two million"}'),
        reply('{"city":"Paris","population":2100000}'),
      ],
    });
    const { harness } = await harnessFor(backend);
    const result = await harness.run({ task: 'What is the capital of France?', output: City });
    expect(result.output).toEqual({ city: 'Paris', population: 2_100_000 });
    expect(textOf(backend.calls.at(-1))).toMatch(/does not match the schema: population: /);
    backend.assertComplete();
  });

  it('gives no output, a warning and the reason when the value still fails: never a fake value', async () => {
    const backend = new ScriptedBackend({
      execute: [submit(ANSWER)],
      synthesize: [reply('{"city":"Paris"}'), reply('Paris, roughly two million people.')],
    });
    const { harness, events } = await harnessFor(backend);
    const result = await harness.run({ task: 'What is the capital of France?', output: City });
    expect(result.status).toBe('succeeded');
    expect(result).not.toHaveProperty('output');
    expect(result.outputError).toMatch(/failed its schema after 2 ask\(s\).*holds no JSON value/);
    expect(events.filter((e) => e.type === 'run-warning').map((e) => e.type === 'run-warning' && e.code)).toEqual([
      'output-invalid',
    ]);
    expect(result.report.warnings['output-invalid']).toBe(1);
  });

  it('accepts a Valibot schema, after verification passed', async () => {
    const Answer = v.object({ city: v.string(), capital: v.boolean() });
    const backend = new ScriptedBackend({
      execute: [submit(ANSWER)],
      verify: [verdict(true)],
      synthesize: [reply('```json\n{"city":"Paris","capital":true}\n```')],
    });
    const { harness } = await harnessFor(backend, true);
    const result = await harness.run({ task: 'What is the capital of France?', output: Answer });
    expect(result.status).toBe('succeeded');
    expect(result.output).toEqual({ city: 'Paris', capital: true });
    expectTypeOf(result.output).toEqualTypeOf<{ city: string; capital: boolean } | undefined>();
    expect(backend.calls.map((call) => call.purpose)).toEqual(['execute', 'verify', 'synthesize']);
  });

  it('asks nothing for a deliverable that failed verification, and says why', async () => {
    const backend = new ScriptedBackend({
      execute: [submit(ANSWER)],
      verify: [verdict(false, ['The population is not sourced.'])],
    });
    const harness = createHarness({
      backend,
      workspace: await tempDir(),
      decomposition: false,
      limits: { repairAttempts: 0 },
    });
    const result = await harness.run({ task: 'What is the capital of France?', output: City });
    expect(result.status).toBe('failed');
    expect(result).not.toHaveProperty('output');
    expect(result.outputError).toMatch(/status "failed", so no typed result was asked for/);
    expect(backend.calls.some((call) => call.purpose === 'synthesize')).toBe(false);
  });

  it('refuses at run() a schema it cannot convert without outputJsonSchema', async () => {
    const opaque = { '~standard': { version: 1 as const, vendor: 'acme', validate: (value: unknown) => ({ value }) } };
    const { harness } = await harnessFor(new ScriptedBackend([]));
    await expect(harness.run({ task: 't', output: opaque })).rejects.toMatchObject({
      code: 'invalid-input',
      message: expect.stringMatching(/cannot convert a acme schema.*outputJsonSchema/),
    });
  });
});
