import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { GenerateRequest, LlmBackend, Message, PromptCacheCapability, Usage } from '../../src/backend/types.js';
import { isAged } from '../../src/memory/aging.js';
import type { CacheBreakEvent } from '../../src/events.js';
import { createHarness, defineTool, type MemoryManagerOptions } from '../../src/index.js';
import {
  reply,
  ScriptedBackend,
  SimulatedPromptCache,
  submit,
  toolCall,
  withSimulatedPromptCache,
} from '../../src/testing/index.js';
import { collect, tempDir } from '../harness/helpers.js';
import { cachingBackend, loopRequests, prefixViolations } from '../memory/cache-prefix.js';

const STEPS = 30;

const emitData = defineTool({
  name: 'emit_data',
  description: 'Returns the given number of characters of data.',
  input: z.object({ chars: z.number().int().min(0), step: z.number().int() }),
  readOnly: true,
  execute: ({ chars, step }) => `step ${step} `.padEnd(chars, 'measured values 4711 and words '),
});

/** One loop of {@link STEPS} tool calls of `chars` characters each, then the answer, through the public API. */
async function thirtyStepRun(options: {
  window: number;
  chars: number;
  memory: MemoryManagerOptions;
  promptCache?: PromptCacheCapability;
  /** The backend the harness calls, around the scripted one (default: it, declaring `promptCache`). */
  wrap?: (scripted: ScriptedBackend) => LlmBackend;
}) {
  let step = 0;
  const scripted = new ScriptedBackend(
    (request: GenerateRequest) => {
      if (request.purpose === 'summarize') return reply('Summary: data was gathered step by step.');
      if (request.purpose === 'execute' && step < STEPS)
        return toolCall('emit_data', { chars: options.chars, step: step++ });
      return submit(`${request.purpose} done after ${step} steps`);
    },
    { contextWindow: options.window, usage: 'zero' },
  );
  const harness = createHarness({
    backend: options.wrap?.(scripted) ?? cachingBackend(scripted, options.promptCache),
    tools: [emitData],
    workspace: await tempDir(),
    decomposition: false,
    verification: false,
    memory: options.memory,
  });
  const events = collect(harness);
  const result = await harness.run({ task: 'Gather the data step by step, then report.' });
  expect(result.status).toBe('succeeded');
  const requests = loopRequests(scripted.calls, events);
  const breaks = events.filter((event): event is CacheBreakEvent => event.type === 'cache-break');
  return { result, requests, breaks, scripted, execute: requests.filter((r) => r.loop.startsWith('execute/')) };
}

describe('prompt caching: a loop keeps its prefix between reported breaks', () => {
  it('a 30-step loop with observation aging on a caching backend ages in batches, each break reported', async () => {
    const run = await thirtyStepRun({
      window: 128_000,
      chars: 3_000,
      memory: { observationAging: { keepRecentRounds: 3 } },
      promptCache: { mode: 'markers' },
    });
    expect(run.execute.length).toBe(STEPS + 1);
    expect(prefixViolations(run.requests)).toEqual([]);
    // 27 rounds grow old over the loop; in batches of 8 they age 3 times, not 27.
    expect(run.breaks.map((b) => b.cause)).toEqual(['aging', 'aging', 'aging']);
    expect(run.result.report.cacheBreaks).toEqual({
      aging: { count: 3, prefixTokensLost: run.breaks.reduce((sum, b) => sum + b.prefixTokensLost, 0) },
    });
    // Each request marks the task message and the last aged observation; the request that ages a batch also marks
    // where the batch before it ended, so it reads everything up to there.
    const lastAged = (messages: readonly Message[]) => messages.findLastIndex((m) => isAged(m));
    let previous = -1;
    for (const { request } of run.execute) {
      const current = lastAged(request.messages);
      const aged = [...new Set([previous, current])].filter((i) => i >= 0).sort((a, b) => a - b);
      expect(request.cacheBreakpoints).toEqual([1, ...aged]);
      previous = current;
    }
    expect(run.execute.filter((r) => (r.request.cacheBreakpoints?.length ?? 0) === 3)).toHaveLength(2);
  });

  it('under a marker-based cache, the request that ages a batch reads the dialogue up to the batch before it', async () => {
    const usages: Usage[] = [];
    const run = await thirtyStepRun({
      window: 128_000,
      chars: 3_000,
      memory: { observationAging: { keepRecentRounds: 3 } },
      wrap: (scripted) => {
        const simulated = withSimulatedPromptCache(scripted, { mode: 'markers', now: () => 0 });
        return {
          ...simulated,
          generate: async (request) => {
            const result = await simulated.generate(request);
            usages.push(result.usage);
            return result;
          },
        };
      },
    });
    // Counts a prefix as the simulated cache does (every token, no minimum, no steps).
    const counter = new SimulatedPromptCache({ mode: 'automatic', minPrefixTokens: 0, stepTokens: 1 });
    const tokensOf = (request: GenerateRequest, end: number) =>
      counter.observe({ messages: request.messages.slice(0, end + 1), tools: request.tools ?? [] }, `count-${end}`)
        .inputTokens;
    const agingBreaks = run.execute.filter((r) => r.breaks.some((b) => b.cause === 'aging'));
    expect(agingBreaks).toHaveLength(3);
    let checked = 0;
    for (const { request } of agingBreaks) {
      const usage = usages[run.scripted.calls.indexOf(request)];
      const [, previousEnd, end] = request.cacheBreakpoints ?? [];
      if (previousEnd === undefined || end === undefined) continue;
      // Read: everything up to where the previous batch ended; written: the rest, up to the newest message.
      expect(usage?.cachedInputTokens).toBe(tokensOf(request, previousEnd));
      expect(usage?.cacheWriteInputTokens).toBe((usage?.inputTokens ?? 0) - tokensOf(request, previousEnd));
      checked += 1;
    }
    expect(checked).toBe(2);
  });

  it('without a caching backend aging goes on every step, and every step reports its break', async () => {
    const run = await thirtyStepRun({
      window: 128_000,
      chars: 3_000,
      memory: { observationAging: { keepRecentRounds: 3 } },
    });
    expect(prefixViolations(run.requests)).toEqual([]);
    expect(run.breaks.length).toBe(STEPS - 3);
    expect(new Set(run.breaks.map((b) => b.cause))).toEqual(new Set(['aging']));
  });

  it('compressions on a small window are reported, and the summary is marked as a stable part', async () => {
    const run = await thirtyStepRun({ window: 16_000, chars: 6_000, memory: {}, promptCache: { mode: 'automatic' } });
    expect(prefixViolations(run.requests)).toEqual([]);
    const causes = run.breaks.map((b) => b.cause);
    expect(causes.length).toBeGreaterThan(2);
    expect(new Set(causes)).toEqual(new Set(['compression']));
    expect(run.result.report.cacheBreaks.compression?.count).toBe(run.result.report.compressions);
    // Requests after a compression mark the summary (message 2) beside the task message.
    const marked = run.execute.filter((r) => r.request.cacheBreakpoints?.includes(2));
    expect(marked.length).toBeGreaterThan(0);
    for (const { request } of marked) expect(request.messages[2]?.content).toMatch(/^\[Summary of earlier work/);
  });
});
