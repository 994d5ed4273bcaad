import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { GenerateRequest, PromptCacheCapability } from '../../src/backend/types.js';
import { createHarness, defineTool, MemoryManager } from '../../src/index.js';
import { reply, ScriptedBackend, submit, toolCalls } from '../../src/testing/index.js';
import { collect, tempDir } from '../harness/helpers.js';
import { cachingBackend, loopRequests, prefixViolations } from './cache-prefix.js';

/** One random loop: the outputs of its tool calls (several per reply at times), the window, aging, the cache. */
const Loop = fc.record({
  window: fc.integer({ min: 6_000, max: 200_000 }),
  maxOutputTokens: fc.integer({ min: 256, max: 4_096 }),
  replies: fc.array(fc.array(fc.integer({ min: 0, max: 40_000 }), { minLength: 1, maxLength: 3 }), {
    minLength: 1,
    maxLength: 30,
  }),
  aging: fc.option(
    fc.record({ keepRecentRounds: fc.integer({ min: 1, max: 4 }), batchRounds: fc.integer({ min: 1, max: 10 }) }),
    { nil: undefined },
  ),
  cache: fc.constantFrom<PromptCacheCapability['mode'] | undefined>(undefined, 'none', 'automatic', 'markers'),
  summaryFails: fc.boolean(),
});
type Loop = typeof Loop extends fc.Arbitrary<infer T> ? T : never;

const filler = (chars: number, tag: string) =>
  `${tag} `.padEnd(Math.max(tag.length + 1, chars), 'data words and 1234 numbers ');

const emitData = defineTool({
  name: 'emit_data',
  description: 'Returns the given number of characters of data.',
  input: z.object({ chars: z.number().int().min(0), tag: z.string() }),
  readOnly: true,
  execute: ({ chars, tag }) => filler(chars, tag),
});

/** Twelve replies of one 9 000-character output each on a small window. */
const overfilled = (window: number, cache: Loop['cache'], summaryFails: boolean): Loop => ({
  window,
  maxOutputTokens: 1_000,
  replies: Array(12).fill([9_000]),
  aging: undefined,
  cache,
  summaryFails,
});

/** Twenty-five replies with the given outputs each on a large window, with aging. */
const aging = (outputs: number[], options: NonNullable<Loop['aging']>, cache: Loop['cache']): Loop => ({
  window: 128_000,
  maxOutputTokens: 4_000,
  replies: Array(25).fill(outputs),
  aging: options,
  cache,
  summaryFails: false,
});

async function runLoop(loop: Loop) {
  const counter = new MemoryManager();
  const oversize: string[] = [];
  let step = 0;
  const scripted = new ScriptedBackend(
    (request: GenerateRequest) => {
      const input = counter.countRequest(request.messages, request.tools ?? []);
      if (input + (request.maxOutputTokens ?? Number.POSITIVE_INFINITY) > loop.window)
        oversize.push(`${request.purpose}: ${input} + ${request.maxOutputTokens} > ${loop.window}`);
      if (request.purpose === 'summarize') {
        if (loop.summaryFails) throw new Error('summariser down');
        return reply('Summary: data was gathered.');
      }
      const outputs = request.purpose === 'execute' ? loop.replies[step] : undefined;
      if (!outputs) return submit(`${request.purpose} done`);
      const current = step++;
      return toolCalls(outputs.map((chars, i) => ({ name: 'emit_data', args: { chars, tag: `r${current}-${i}` } })));
    },
    { contextWindow: loop.window, usage: 'zero' },
  );
  const backend = cachingBackend(scripted, loop.cache ? { mode: loop.cache } : undefined);
  const harness = createHarness({
    backend,
    tools: [emitData],
    workspace: await tempDir(),
    decomposition: false,
    verification: false,
    limits: { maxOutputTokens: loop.maxOutputTokens },
    memory: loop.aging ? { observationAging: loop.aging } : {},
  });
  const events = collect(harness);
  const result = await harness.run({ task: 'Gather the data, then report.' });
  return { result, events, oversize, requests: loopRequests(scripted.calls, events) };
}

describe('prompt caching: the prefix property', () => {
  it('consecutive requests of a loop share their prefix except at reported cache-break events, and none exceeds the window', async () => {
    const causes = new Set<string>();
    await fc.assert(
      fc.asyncProperty(Loop, async (loop) => {
        const { result, events, oversize, requests } = await runLoop(loop);
        expect(oversize).toEqual([]);
        // A reply whose own observations overfill a small window is refused with a clear error, never sent.
        if (result.status !== 'succeeded') expect(result.error?.code).toBe('context-overflow');
        expect(prefixViolations(requests)).toEqual([]);
        // The report counts every break by its cause.
        const breaks = events.flatMap((event) => (event.type === 'cache-break' ? [event] : []));
        for (const event of breaks) causes.add(event.cause);
        const counted = Object.values(result.report.cacheBreaks).reduce((sum, c) => sum + (c?.count ?? 0), 0);
        expect(counted).toBe(breaks.length);
      }),
      {
        numRuns: 25,
        examples: [
          // Small windows long outputs overfill: compressions; emergency prunes where the rounds kept whole do not fit;
          // prunes when the summariser fails.
          [overfilled(16_000, 'markers', false)],
          [overfilled(6_000, 'markers', false)],
          [overfilled(6_000, 'automatic', true)],
          // Aging in batches on a caching backend, every step on one that does not.
          [aging([5_000, 300], { keepRecentRounds: 3, batchRounds: 8 }, 'markers')],
          [aging([5_000], { keepRecentRounds: 2, batchRounds: 8 }, undefined)],
        ],
      },
    );
    // The loops reached every cause the shipped memory has besides `other`.
    expect([...causes].sort()).toEqual(['aging', 'compression', 'emergency', 'prune']);
  }, 240_000);
});
