/**
 * Billing prompt-cached calls (issue 23): each `llm-response` and the report's cost charge cache reads, cache writes
 * and uncached input each at its own price, and the report shows every purpose's cache reads, writes and hit ratio.
 */
import { describe, expect, it } from 'vitest';
import { callCost } from '../../src/backend/pricing.js';
import { createHarness, type GenerateResult, type LlmResponseEvent, type Usage } from '../../src/index.js';
import { runBackendView } from '../../src/llm/call-gate.js';
import { ScriptedBackend, planOf, submit, withSimulatedPromptCache } from '../../src/testing/index.js';
import { collect, tempDir } from './helpers.js';

/** Anthropic's multipliers on a $3 input price: reads 0.1×, 5-minute writes 1.25×. */
const SHEET = { currency: 'USD', inputPerMTok: 3, outputPerMTok: 15, cachedInputPerMTok: 0.3, cacheWritePerMTok: 3.75 };

const used = (step: GenerateResult, usage: Usage) => ({ ...step, usage });

describe('billing cached tokens', () => {
  it('callCost prices uncached input, cache reads and cache writes each at its own price', () => {
    const usage = { inputTokens: 10_000, outputTokens: 100, cachedInputTokens: 8_000, cacheWriteInputTokens: 1_500 };
    expect(callCost(usage, SHEET)).toBeCloseTo((500 * 3 + 8_000 * 0.3 + 1_500 * 3.75 + 100 * 15) / 1e6, 15);
    // Without the cache prices, reads and writes cost the input price.
    expect(callCost(usage, { inputPerMTok: 3, outputPerMTok: 15 })).toBeCloseTo((10_000 * 3 + 100 * 15) / 1e6, 15);
    // Figures above the input are cut to it, reads first.
    expect(
      callCost({ inputTokens: 100, outputTokens: 0, cachedInputTokens: 80, cacheWriteInputTokens: 50 }, SHEET),
    ).toBeCloseTo((80 * 0.3 + 20 * 3.75) / 1e6, 15);
  });

  it('llm-response, report.cost and report.byPurpose carry the cache figures', async () => {
    const backend = new ScriptedBackend(
      {
        plan: [used(planOf('a', 'b'), { inputTokens: 2_000, outputTokens: 50 })],
        execute: [
          used(submit('A'), {
            inputTokens: 4_000,
            outputTokens: 100,
            cachedInputTokens: 0,
            cacheWriteInputTokens: 3_000,
          }),
          used(submit('B'), {
            inputTokens: 6_000,
            outputTokens: 100,
            cachedInputTokens: 3_000,
            cacheWriteInputTokens: 2_500,
          }),
        ],
        synthesize: [used(submit('A and B'), { inputTokens: 1_000, outputTokens: 10, cachedInputTokens: 0 })],
      },
      { pricing: SHEET },
    );
    const harness = createHarness({ backend, workspace: await tempDir(), verification: false });
    const events = collect(harness);
    const result = await harness.run('Two facts about owls.');
    expect(result.status).toBe('succeeded');
    const costs = events
      .filter((e): e is LlmResponseEvent => e.type === 'llm-response')
      .map((e) => [e.purpose, e.cost]);
    const usd = (uncached: number, read: number, write: number, output: number) =>
      (uncached * 3 + read * 0.3 + write * 3.75 + output * 15) / 1e6;
    const expected = [
      ['plan', usd(2_000, 0, 0, 50)],
      ['execute', usd(1_000, 0, 3_000, 100)],
      ['execute', usd(500, 3_000, 2_500, 100)],
      ['synthesize', usd(1_000, 0, 0, 10)],
    ] as const;
    expected.forEach(([purpose, cost], i) => {
      expect(costs[i]?.[0]).toBe(purpose);
      expect(costs[i]?.[1]).toBeCloseTo(cost, 15);
    });
    const total = expected.reduce((sum, [, cost]) => sum + cost, 0);
    expect(result.report.cost?.total).toBeCloseTo(total, 15);
    const { byPurpose } = result.report;
    expect(byPurpose.execute).toEqual({
      calls: 2,
      inputTokens: 10_000,
      outputTokens: 200,
      cachedInputTokens: 3_000,
      cacheWriteInputTokens: 5_500,
      cacheHitRatio: 0.3,
    });
    expect(byPurpose.synthesize).toMatchObject({ cachedInputTokens: 0, cacheWriteInputTokens: 0, cacheHitRatio: 0 });
    // The plan's provider said nothing about caching: no cache figures, rather than a 0 % it never reported.
    expect(byPurpose.plan).toEqual({ calls: 1, inputTokens: 2_000, outputTokens: 50 });
  });
});

describe("a run's view of a caching backend", () => {
  it('keeps the backend’s promptCache, so a priced or cost-limited run still sees how its provider caches', async () => {
    const cached = withSimulatedPromptCache(new ScriptedBackend([submit('x')]), { mode: 'markers', now: () => 0 });
    const view = runBackendView(cached, { pricing: { ...SHEET }, gate: undefined });
    expect(view.promptCache).toEqual({ mode: 'markers', minPrefixTokens: 1024, maxMarkers: 4 });
  });
});
