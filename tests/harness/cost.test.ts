/**
 * Cost: prices per backend and per role, the report's `cost`, `llm-response.cost`, and `limits.maxCost` stopping a run
 * before the call that could pass it.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHarness, type GenerateResult, type HarnessEvent, type LlmResponseEvent } from '../../src/index.js';
import { ScriptedBackend, planOf, reply, submit, toolCall, verdict } from '../../src/testing/index.js';
import { decide, executeRecords } from '../managed/helpers.js';
import { collect, tempDir, writeFile } from './helpers.js';

const TASK = 'Collect two facts about owls and write owls.md with both.';

/** A scripted reply that reports this usage. */
function used(step: GenerateResult, inputTokens: number, outputTokens: number, cachedInputTokens?: number) {
  return {
    ...step,
    usage: { inputTokens, outputTokens, ...(cachedInputTokens === undefined ? {} : { cachedInputTokens }) },
  };
}

/** The cost of a call at `inPrice` / `outPrice` per million tokens, computed by hand. */
const at = (inPrice: number, outPrice: number) => (input: number, output: number) =>
  (input * inPrice + output * outPrice) / 1_000_000;

function responses(events: readonly HarnessEvent[]): LlmResponseEvent[] {
  return events.filter((e): e is LlmResponseEvent => e.type === 'llm-response');
}

/** plan → two subtasks → synthesis → verification, each call with a usage of its own. */
function fullPipeline(options: ConstructorParameters<typeof ScriptedBackend>[1] = {}) {
  return new ScriptedBackend(
    {
      plan: [used(planOf('a', 'b'), 1000, 200)],
      execute: [used(submit('A'), 2000, 100), used(submit('B'), 3000, 300)],
      synthesize: [used(submit('A and B'), 4000, 400)],
      verify: [used(verdict(true), 5000, 50)],
    },
    options,
  );
}

describe('the report: cost', () => {
  it('is the sum of every call at its prices, per purpose and in total, and each llm-response carries its cost', async () => {
    const harness = createHarness({
      backend: fullPipeline(),
      workspace: await tempDir(),
      pricing: { currency: 'USD', inputPerMTok: 2, outputPerMTok: 10 },
    });
    const events = collect(harness);
    const result = await harness.run(TASK);
    const usd = at(2, 10);
    const byPurpose = {
      plan: usd(1000, 200),
      execute: usd(2000, 100) + usd(3000, 300),
      synthesize: usd(4000, 400),
      verify: usd(5000, 50),
    };
    expect(result.status).toBe('succeeded');
    const cost = result.report.cost;
    expect(cost).toMatchObject({ currency: 'USD', unpricedCalls: 0 });
    expect(Object.keys(cost?.byPurpose ?? {}).sort()).toEqual(Object.keys(byPurpose).sort());
    for (const [purpose, amount] of Object.entries(byPurpose)) {
      expect(cost?.byPurpose[purpose as keyof typeof byPurpose]).toBeCloseTo(amount, 12);
    }
    expect(cost?.total).toBeCloseTo(0.0405, 12);
    const calls = responses(events);
    expect(calls.map((e) => [e.purpose, e.currency])).toEqual([
      ['plan', 'USD'],
      ['execute', 'USD'],
      ['execute', 'USD'],
      ['synthesize', 'USD'],
      ['verify', 'USD'],
    ]);
    expect(calls[2]?.cost).toBeCloseTo(usd(3000, 300), 12);
  });

  it('is null, not 0, when no price is given, and llm-response carries no cost', async () => {
    const harness = createHarness({ backend: fullPipeline(), workspace: await tempDir() });
    const events = collect(harness);
    const result = await harness.run(TASK);
    expect(result.report.cost).toBeNull();
    expect(result.report.modelCalls).toBe(5);
    expect(responses(events).some((e) => 'cost' in e || 'currency' in e)).toBe(false);
  });

  it("charges cached input tokens at the backend's cached price, else at its input price", async () => {
    const run = async (pricing: {
      currency: string;
      inputPerMTok: number;
      outputPerMTok: number;
      cachedInputPerMTok?: number;
    }) => {
      const backend = new ScriptedBackend({ execute: [used(submit('x'), 10_000, 1000, 8000)] }, { pricing });
      const harness = createHarness({ backend, workspace: await tempDir(), decomposition: false, verification: false });
      return (await harness.run(TASK)).report.cost;
    };
    const cached = await run({ currency: 'EUR', inputPerMTok: 3, cachedInputPerMTok: 0.3, outputPerMTok: 15 });
    expect(cached?.currency).toBe('EUR');
    expect(cached?.total).toBeCloseTo((2000 * 3 + 8000 * 0.3 + 1000 * 15) / 1_000_000, 12);
    const uncached = await run({ currency: 'EUR', inputPerMTok: 3, outputPerMTok: 15 });
    expect(uncached?.total).toBeCloseTo((10_000 * 3 + 1000 * 15) / 1_000_000, 12);
  });

  it("prices a role by pricing.roles over its backend's own prices, and counts calls without a price apart", async () => {
    const main = new ScriptedBackend({
      execute: [used(submit('A'), 2000, 100), used(submit('B'), 3000, 300)],
      synthesize: [used(submit('A and B'), 4000, 400)],
    });
    const planner = new ScriptedBackend({ plan: [used(planOf('a', 'b'), 1000, 200)] }); // no price
    const checker = new ScriptedBackend(
      { verify: [used(verdict(true), 5000, 50)] },
      { pricing: { currency: 'USD', inputPerMTok: 1000, outputPerMTok: 1000 } },
    );
    const harness = createHarness({
      backend: main,
      roles: { plan: planner, verify: checker },
      workspace: await tempDir(),
      pricing: {
        currency: 'USD',
        inputPerMTok: 2,
        outputPerMTok: 10,
        roles: { verify: { inputPerMTok: 10, outputPerMTok: 100 } },
      },
    });
    const result = await harness.run(TASK);
    const cost = result.report.cost;
    expect(cost?.unpricedCalls).toBe(1);
    expect(cost?.byPurpose.plan).toBeUndefined();
    expect(cost?.byPurpose.verify).toBeCloseTo(at(10, 100)(5000, 50), 12);
    expect(cost?.byPurpose.execute).toBeCloseTo(at(2, 10)(2000, 100) + at(2, 10)(3000, 300), 12);
    expect(cost?.total).toBeCloseTo(0.014 + 0.012 + at(10, 100)(5000, 50), 12);
    // The backends themselves are called, not copies: their recorded calls are all there.
    expect([planner.calls.length, main.calls.length, checker.calls.length]).toEqual([1, 3, 1]);
  });
});

/**
 * Prices that make the worst case of every call 1 USD whatever its input (input is free; the 1 000 reserved output
 * tokens cost 1 000 USD per million) while a call that answers with 100 tokens costs 0.1 USD.
 */
const RESERVE_PRICED = {
  pricing: { currency: 'USD', inputPerMTok: 0, outputPerMTok: 1000 },
  limits: { maxOutputTokens: 1000 },
} as const;

describe('limits.maxCost', () => {
  it('stops the run before the call that could pass it: never sent, failed with cost-limit and the partial deliverable', async () => {
    const backend = new ScriptedBackend({
      plan: [used(planOf('a', 'b'), 50, 100)],
      execute: [
        used(toolCall('write_file', { path: 'a.md', content: 'A' }), 50, 100),
        used(submit('A done', ['a.md']), 50, 100),
        used(submit('B done'), 50, 100),
      ],
    });
    const workspace = await tempDir();
    const harness = createHarness({
      backend,
      tools: [writeFile],
      workspace,
      verification: false,
      ...RESERVE_PRICED,
      limits: { ...RESERVE_PRICED.limits, maxCost: 1.25 },
    });
    const events = collect(harness);
    const result = await harness.run(TASK);
    // Spent 0.1 per call: the plan and subtask 1's two calls fit under 1.25 with a worst case of 1 each; the
    // fourth (0.3 + 1) does not.
    expect(backend.calls.map((c) => c.purpose)).toEqual(['plan', 'execute', 'execute']);
    expect(events.filter((e) => e.type === 'llm-request')).toHaveLength(3);
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('cost-limit');
    expect(result.error?.message).toContain('limits.maxCost (1.25 USD)');
    expect(result.error?.message).toContain('spent 0.3 USD');
    expect(result.error?.message).toContain('execute in subtask-2');
    expect(result.error?.message).toContain('up to 1 USD');
    expect(events.find((e) => e.type === 'run-error')).toMatchObject({
      error: { code: 'cost-limit' },
      stage: 'execute',
    });
    expect(result.deliverable.answer).toContain('A done');
    expect(result.deliverable.files).toContain('a.md');
    expect(await readFile(path.join(workspace, 'a.md'), 'utf8')).toBe('A');
    expect(result.subtasks.map((s) => [s.status, s.attempts])).toEqual([
      ['completed', 1],
      ['failed', 1],
    ]);
    expect(result.report.cost?.total).toBeCloseTo(0.3, 12);
  });

  it('lets a run whose calls stay within it finish', async () => {
    const backend = new ScriptedBackend({
      plan: [used(planOf('a', 'b'), 50, 100)],
      execute: [used(submit('A'), 50, 100), used(submit('B'), 50, 100)],
      synthesize: [used(submit('A and B'), 50, 100)],
    });
    const harness = createHarness({
      backend,
      workspace: await tempDir(),
      verification: false,
      ...RESERVE_PRICED,
      limits: { ...RESERVE_PRICED.limits, maxCost: 1.4 },
    });
    const result = await harness.run(TASK);
    expect(result.status).toBe('succeeded');
    expect(result.report.cost?.total).toBeCloseTo(0.4, 12);
  });

  it('stops a managed run the same way', async () => {
    const backend = new ScriptedBackend({
      manage: [used(executeRecords([{ id: 'report', description: 'report.md exists' }]), 50, 100), decide('done')],
      execute: [
        used(toolCall('write_file', { path: 'report.md', content: '# Rivers' }), 50, 100),
        used(reply('Wrote report.md.'), 50, 100),
      ],
    });
    const harness = createHarness({
      backend,
      tools: [writeFile],
      workspace: await tempDir(),
      mode: 'managed',
      ...RESERVE_PRICED,
      limits: { ...RESERVE_PRICED.limits, maxCost: 1.15 },
    });
    const events = collect(harness);
    const result = await harness.run('Write report.md with the heading "# Rivers".');
    expect(backend.calls.map((c) => c.purpose)).toEqual(['manage', 'execute']);
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('cost-limit');
    expect(result.error?.message).toContain('spent 0.2 USD');
    expect(events.find((e) => e.type === 'run-error')).toMatchObject({ error: { code: 'cost-limit' } });
    // As with a used-up iteration budget, the partial deliverable is the state as audited so far.
    expect(result.deliverable.answer).toContain('0 of 1 record(s) completed');
    expect(result.taskState?.records).toMatchObject([{ id: 'report', status: 'pending' }]);
    expect(result.report.cost?.total).toBeCloseTo(0.2, 12);
  });
});

describe('pricing and maxCost: checked at createHarness', () => {
  const backend = new ScriptedBackend([]);
  const refused = (options: object, ...parts: string[]) => {
    let error: unknown;
    try {
      createHarness({ backend, ...options });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toMatchObject({ code: 'invalid-options' });
    for (const part of parts) expect((error as Error).message).toContain(part);
  };

  it('names a misspelt key with the closest valid one, at every level', () => {
    refused(
      { pricing: { currency: 'USD', inputPerMtok: 1, outputPerMTok: 2 } },
      '`pricing.inputPerMtok` is not an option (did you mean `pricing.inputPerMTok`?)',
    );
    refused(
      { pricing: { currency: 'USD', roles: { verify: { inputPerMTok: 1, outputPerMtok: 2 } } } },
      '`pricing.roles.verify.outputPerMtok` is not an option (did you mean `pricing.roles.verify.outputPerMTok`?)',
    );
    refused(
      { pricing: { currency: 'USD', roles: { verfy: { inputPerMTok: 1, outputPerMTok: 2 } } } },
      '`pricing.roles.verfy` is not an option (did you mean `pricing.roles.verify`?)',
    );
    refused({ limits: { maxCots: 1 } }, '`limits.maxCots` is not an option (did you mean `limits.maxCost`?)');
  });

  it('refuses negative prices, a missing currency, half a price and a maxCost that is not > 0', () => {
    refused({ pricing: { currency: 'USD', inputPerMTok: -1, outputPerMTok: 2 } }, 'pricing.inputPerMTok', '≥ 0');
    refused({ pricing: { inputPerMTok: 1, outputPerMTok: 2 } }, 'pricing.currency');
    refused({ pricing: { currency: 'USD', inputPerMTok: 1 } }, 'inputPerMTok and outputPerMTok together');
    refused(
      { pricing: { currency: 'USD', inputPerMTok: 1, outputPerMTok: 1 }, limits: { maxCost: 0 } },
      'limits.maxCost',
    );
  });

  it('refuses maxCost without prices, and with a role that has none', () => {
    refused({ limits: { maxCost: 1 } }, '`limits.maxCost` needs prices');
    refused(
      {
        pricing: { currency: 'USD', inputPerMTok: 1, outputPerMTok: 1 },
        roles: { verify: new ScriptedBackend([]) },
        limits: { maxCost: 1 },
      },
      'these have none: verify',
    );
    const priced = new ScriptedBackend([], { pricing: { currency: 'USD', inputPerMTok: 1, outputPerMTok: 1 } });
    expect(() => createHarness({ backend: priced, limits: { maxCost: 1 } })).not.toThrow();
  });

  it('refuses prices in more than one currency, naming each', () => {
    const euros = new ScriptedBackend([], { pricing: { currency: 'EUR', inputPerMTok: 1, outputPerMTok: 1 } });
    refused(
      { roles: { verify: euros }, pricing: { currency: 'USD', inputPerMTok: 1, outputPerMTok: 1 } },
      'more than one currency',
      'USD (pricing)',
      'EUR (the pricing of roles.verify (scripted scripted))',
    );
    // A backend's own prices that a role price replaces everywhere are never used, so they do not count.
    expect(() =>
      createHarness({ backend: euros, pricing: { currency: 'USD', inputPerMTok: 1, outputPerMTok: 1 } }),
    ).not.toThrow();
  });

  it("refuses a custom backend's malformed pricing", () => {
    const custom = {
      ...backend,
      generate: backend.generate.bind(backend),
      pricing: { currency: 'USD', inputPerMTok: -2, outputPerMTok: 1 },
    };
    expect(() => createHarness({ backend: custom })).toThrow(
      /the pricing of backend \(scripted scripted\) is not valid: `inputPerMTok`/,
    );
  });

  it('the adapters and ScriptedBackend check their pricing option', async () => {
    const { openAICompatible } = await import('../../src/index.js');
    expect(() =>
      openAICompatible({
        baseURL: 'http://127.0.0.1:1/v1',
        model: 'm',
        pricing: { currency: 'USD', inputPerMTok: 1, outputPerMtok: 2 } as never,
      }),
    ).toThrow(/`pricing.outputPerMtok` is not an option \(did you mean `pricing.outputPerMTok`\?\)/);
    const adapter = openAICompatible({
      baseURL: 'http://127.0.0.1:1/v1',
      model: 'm',
      pricing: { currency: 'USD', inputPerMTok: 1, outputPerMTok: 2 },
    });
    expect(adapter.pricing).toEqual({ currency: 'USD', inputPerMTok: 1, outputPerMTok: 2 });
    expect(() => new ScriptedBackend([], { pricing: { currency: 'USD', inputPerMTok: -1, outputPerMTok: 1 } })).toThrow(
      /pricing/,
    );
  });
});
