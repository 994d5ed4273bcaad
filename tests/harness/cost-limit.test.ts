/**
 * `limits.maxCost` kept hard or soft (issue 25): a hard limit admits each call at its worst case, the output it
 * actually reserves; a soft one lets a run that stays under the limit finish, and stops a run after the call that
 * crosses it. Refusals name every lever.
 */
import { describe, expect, it } from 'vitest';
import { createHarness, type GenerateResult } from '../../src/index.js';
import { ScriptedBackend, planOf, submit, verdict } from '../../src/testing/index.js';
import { collect, tempDir } from './helpers.js';

const TASK = 'Collect two facts about owls and write them down.';
/** A Sonnet-like price sheet: $3 in, $15 out per million tokens. */
const PRICING = { currency: 'USD', inputPerMTok: 3, outputPerMTok: 15 };

const used = (step: GenerateResult, inputTokens: number, outputTokens: number) => ({
  ...step,
  usage: { inputTokens, outputTokens },
});

/** plan → two subtasks → synthesis → verification; each call costs 0.001305 USD, 0.006525 USD in all. */
function smallRun() {
  const call = <T extends GenerateResult>(step: T) => used(step, 350, 17);
  return new ScriptedBackend(
    {
      plan: [call(planOf('a', 'b'))],
      execute: [call(submit('A')), call(submit('B'))],
      synthesize: [call(submit('A and B'))],
      verify: [call(verdict(true))],
    },
    { pricing: PRICING },
  );
}

describe('limits.maxCost with costLimit', () => {
  it('hard (the default) admits a call at the output it reserves, and the refusal names every lever', async () => {
    const backend = smallRun();
    const harness = createHarness({
      backend,
      workspace: await tempDir(),
      limits: { maxCost: 0.012, maxOutputTokens: 500 },
    });
    const events = collect(harness);
    const result = await harness.run(TASK);
    const requests = events.filter((e) => e.type === 'llm-request');
    expect(requests.every((e) => e.maxOutputTokens === 500)).toBe(true);
    // The executor's first request is ~2 200 tokens: 0.0066 USD of input plus 500 × 15 / 1e6 of output is more
    // than the 0.0096 USD the limit leaves after the plan.
    expect(result.error?.code).toBe('cost-limit');
    expect(result.error?.message).toContain('500 output tokens reserved');
    expect(result.error?.message).toContain('raise limits.maxCost');
    expect(result.error?.message).toContain('limits.maxOutputTokens');
    expect(result.error?.message).toContain("limits.costLimit: 'soft'");
  });

  it('soft: a run costing 0.0065 USD finishes under maxCost 0.012 with maxOutputTokens 500', async () => {
    const harness = createHarness({
      backend: smallRun(),
      workspace: await tempDir(),
      limits: { maxCost: 0.012, maxOutputTokens: 500, costLimit: 'soft' },
    });
    const result = await harness.run(TASK);
    expect(result.status).toBe('succeeded');
    expect(result.report.cost?.total).toBeCloseTo(0.0065, 4);
  });

  it('soft: the call that crosses the limit finishes, then the run stops with cost-limit', async () => {
    const backend = smallRun();
    const harness = createHarness({
      backend,
      workspace: await tempDir(),
      limits: { maxCost: 0.0025, costLimit: 'soft' },
    });
    const events = collect(harness);
    const result = await harness.run(TASK);
    // The plan (0.0013) leaves the run under 0.0025; subtask 1's call takes it to 0.0026; nothing more is sent.
    expect(backend.calls.map((c) => c.purpose)).toEqual(['plan', 'execute']);
    expect(events.filter((e) => e.type === 'llm-response')).toHaveLength(2);
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('cost-limit');
    expect(result.error?.message).toContain("limits.maxCost (0.0025 USD, costLimit 'soft')");
    expect(result.error?.message).toContain('spent 0.00261 USD');
    expect(result.report.cost?.total).toBeCloseTo(0.00261, 12);
  });

  it("prices the worst case of a call's input at the cache-write price when writes cost more", async () => {
    const cached = { ...PRICING, cachedInputPerMTok: 0.3, cacheWritePerMTok: 3.75 };
    const harness = createHarness({
      backend: new ScriptedBackend({ plan: [used(planOf('a'), 350, 17)] }, { pricing: cached }),
      workspace: await tempDir(),
      limits: { maxCost: 0.001, maxOutputTokens: 10 },
    });
    const events = collect(harness);
    const result = await harness.run(TASK);
    expect(result.error?.code).toBe('cost-limit');
    const tokens = Number(/(\d+) input tokens/.exec(result.error?.message ?? '')?.[1]);
    const worst = (tokens * 3.75 + 10 * 15) / 1e6;
    expect(result.error?.message).toContain(`up to ${Number(worst.toFixed(6))} USD`);
    expect(events.filter((e) => e.type === 'llm-request')).toHaveLength(0);
  });

  it('counts what a run spent with the cache arithmetic of report.cost: reads cheaper, writes dearer', async () => {
    const cached = { ...PRICING, cachedInputPerMTok: 0.3, cacheWritePerMTok: 3.75 };
    const planWith = (cache: { cachedInputTokens?: number; cacheWriteInputTokens?: number }) =>
      new ScriptedBackend(
        {
          plan: [{ ...planOf('a'), usage: { inputTokens: 1_000_000, outputTokens: 0, ...cache } }],
          execute: [used(submit('A'), 100, 1)],
          synthesize: [used(submit('A'), 100, 1)],
          verify: [used(verdict(true), 100, 1)],
        },
        { pricing: cached },
      );
    const runUnder = async (backend: ScriptedBackend, maxCost: number) => {
      const harness = createHarness({ backend, workspace: await tempDir(), limits: { maxCost, costLimit: 'soft' } });
      const result = await harness.run(TASK);
      return { result, purposes: backend.calls.map((c) => c.purpose) };
    };
    // 100 000 uncached × $3 + 900 000 read × $0.30: $0.57, under $1 (all of it at the input price would be $3).
    const reads = await runUnder(planWith({ cachedInputTokens: 900_000 }), 1);
    expect(reads.result.status).toBe('succeeded');
    expect(reads.result.report.cost?.total).toBeCloseTo(0.57, 2);
    // 1 000 000 written × $3.75: $3.75, over $3.50 (at the input price it would be $3, under it).
    const writes = await runUnder(planWith({ cacheWriteInputTokens: 1_000_000 }), 3.5);
    expect(writes.purposes).toEqual(['plan']);
    expect(writes.result.error?.code).toBe('cost-limit');
    expect(writes.result.error?.message).toContain('spent 3.75 USD');
  });

  it('refuses a costLimit that is neither hard nor soft', () => {
    expect(() => createHarness({ backend: smallRun(), limits: { maxCost: 1, costLimit: 'loose' as 'soft' } })).toThrow(
      /costLimit/,
    );
  });
});
