/**
 * The simulated provider prompt cache of `horizon-harness/testing`: Anthropic's marker-based model and OpenAI's
 * automatic one, TTL on an injected clock, and a backend wrapped with it.
 */
import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/backend/types.js';
import { ScriptedBackend, SimulatedPromptCache, reply, withSimulatedPromptCache } from '../../src/testing/index.js';

/** Each part costs the number after its `#`: exact arithmetic, whatever the serialisation adds. */
const tokenizer = { count: (text: string) => Number(/#(\d+)/.exec(text)?.[1] ?? 0) };

const sys = (n: number): Message => ({ role: 'system', content: `#${n} system` });
const user = (n: number): Message => ({ role: 'user', content: `#${n} request` });
const call = (n: number, id: string): Message => ({
  role: 'assistant',
  content: `#${n}`,
  toolCalls: [{ id, name: 'read', arguments: '{}' }],
});
const result = (n: number, id: string): Message => ({
  role: 'tool',
  toolCallId: id,
  toolName: 'read',
  content: `#${n}`,
});

function clock() {
  let now = 0;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('SimulatedPromptCache, markers (Anthropic)', () => {
  it('writes the marked prefix, then reads it and writes only what is new', () => {
    const cache = new SimulatedPromptCache({ mode: 'markers', tokenizer, now: clock().now });
    const first = [sys(2000), user(100)];
    expect(cache.observe({ messages: first })).toEqual({
      inputTokens: 2100,
      cachedInputTokens: 0,
      cacheWriteInputTokens: 2100,
    });
    const second = [...first, call(50, 'a'), result(1000, 'a')];
    expect(cache.observe({ messages: second })).toEqual({
      inputTokens: 3150,
      cachedInputTokens: 2100,
      cacheWriteInputTokens: 1050,
    });
    // The same request again reads everything.
    expect(cache.observe({ messages: second })).toMatchObject({ cachedInputTokens: 3150, cacheWriteInputTokens: 0 });
  });

  it('reads a breakpoint after the history behind it changed (a compression), and writes the rest', () => {
    const cache = new SimulatedPromptCache({ mode: 'markers', tokenizer, now: clock().now });
    const loop = [sys(2000), user(100), call(50, 'a'), result(1000, 'a'), call(50, 'b'), result(1000, 'b')];
    cache.observe({ messages: loop, cacheBreakpoints: [1] });
    const compressed = [sys(2000), user(100), { role: 'user', content: '#300 summary' } as Message];
    expect(cache.observe({ messages: compressed, cacheBreakpoints: [1, 2] })).toEqual({
      inputTokens: 2400,
      cachedInputTokens: 2100,
      cacheWriteInputTokens: 300,
    });
  });

  it('caches nothing shorter than minPrefixTokens, and nothing unmarked', () => {
    const cache = new SimulatedPromptCache({ mode: 'markers', tokenizer, now: clock().now });
    expect(cache.observe({ messages: [sys(500), user(200)] })).toMatchObject({ cacheWriteInputTokens: 0 });
    expect(cache.observe({ messages: [sys(500), user(200)] })).toMatchObject({ cachedInputTokens: 0 });
    // With more than maxMarkers breakpoints, the oldest is not marked, so not cached.
    const two = new SimulatedPromptCache({ mode: 'markers', tokenizer, now: clock().now, maxMarkers: 2 });
    const loop = [sys(2000), user(100), call(50, 'a'), result(1000, 'a')];
    two.observe({ messages: loop, cacheBreakpoints: [1] });
    expect(two.observe({ messages: [sys(2000), user(100), user(7)] })).toMatchObject({ cachedInputTokens: 2000 });
  });

  it('with lookbackParts, reads only a prefix that ends within that many parts before a marker', () => {
    const history = [sys(2000), user(100), call(50, 'a'), result(1000, 'a'), call(50, 'b'), result(1000, 'b')];
    const grown = [...history, call(50, 'c'), result(1000, 'c'), call(50, 'd'), result(1000, 'd')];
    const near = new SimulatedPromptCache({ mode: 'markers', tokenizer, now: clock().now, lookbackParts: 4 });
    near.observe({ messages: history });
    // The previous request's newest message is 4 parts before this one's: read.
    expect(near.observe({ messages: grown })).toMatchObject({ cachedInputTokens: 4200, cacheWriteInputTokens: 2100 });
    const far = new SimulatedPromptCache({ mode: 'markers', tokenizer, now: clock().now, lookbackParts: 3 });
    far.observe({ messages: history });
    // 4 parts back is out of reach: only the system prompt's own marker finds its prefix.
    expect(far.observe({ messages: grown })).toMatchObject({ cachedInputTokens: 2000, cacheWriteInputTokens: 4300 });
    // A breakpoint on the old newest message brings it back within reach.
    const marked = new SimulatedPromptCache({ mode: 'markers', tokenizer, now: clock().now, lookbackParts: 3 });
    marked.observe({ messages: history });
    expect(marked.observe({ messages: grown, cacheBreakpoints: [5] })).toMatchObject({ cachedInputTokens: 4200 });
  });

  it('forgets a prefix after its TTL, counted from its last use', () => {
    const time = clock();
    const cache = new SimulatedPromptCache({ mode: 'markers', tokenizer, now: time.now });
    const messages = [sys(2000), user(100)];
    cache.observe({ messages });
    time.advance(4 * 60_000);
    expect(cache.observe({ messages })).toMatchObject({ cachedInputTokens: 2100 });
    time.advance(4 * 60_000); // 8 minutes after the write, 4 after the read that refreshed it
    expect(cache.observe({ messages })).toMatchObject({ cachedInputTokens: 2100 });
    time.advance(5 * 60_000 + 1);
    expect(cache.observe({ messages })).toMatchObject({ cachedInputTokens: 0, cacheWriteInputTokens: 2100 });
  });

  it('keeps one cache per key', () => {
    const cache = new SimulatedPromptCache({ mode: 'markers', tokenizer, now: clock().now });
    cache.observe({ messages: [sys(2000), user(100)] }, 'model-a');
    expect(cache.observe({ messages: [sys(2000), user(100)] }, 'model-b')).toMatchObject({ cachedInputTokens: 0 });
  });
});

describe('SimulatedPromptCache, automatic (OpenAI)', () => {
  it('reads the longest prefix seen before, from 1 024 tokens, in 128-token steps, and bills no write', () => {
    const cache = new SimulatedPromptCache({ mode: 'automatic', tokenizer, now: clock().now });
    const first = [sys(1000), user(100)];
    expect(cache.observe({ messages: first })).toEqual({
      inputTokens: 1100,
      cachedInputTokens: 0,
      cacheWriteInputTokens: 0,
    });
    const second = [...first, call(50, 'a'), result(400, 'a')];
    // 1 100 tokens seen before: 1 024 + 0 × 128.
    expect(cache.observe({ messages: second })).toMatchObject({ inputTokens: 1550, cachedInputTokens: 1024 });
    const third = [...second, call(50, 'b'), result(400, 'b')];
    // 1 550 seen before: 1 024 + 4 × 128.
    expect(cache.observe({ messages: third })).toMatchObject({ inputTokens: 2000, cachedInputTokens: 1536 });
  });

  it('caches nothing below the minimum, and forgets after the TTL', () => {
    const time = clock();
    const cache = new SimulatedPromptCache({ mode: 'automatic', tokenizer, now: time.now, ttlMs: 1000 });
    const short = [sys(900)];
    cache.observe({ messages: short });
    expect(cache.observe({ messages: short })).toMatchObject({ cachedInputTokens: 0 });
    const long = [sys(3000)];
    cache.observe({ messages: long });
    time.advance(999);
    expect(cache.observe({ messages: long })).toMatchObject({ cachedInputTokens: 3000 - ((3000 - 1024) % 128) });
    time.advance(1000);
    expect(cache.observe({ messages: long })).toMatchObject({ cachedInputTokens: 0 });
  });

  it('sees the same request alike whatever the key order of its objects', () => {
    const cache = new SimulatedPromptCache({ mode: 'automatic', tokenizer, now: clock().now });
    cache.observe({ messages: [{ role: 'system', content: '#2000' }] });
    const reordered = { content: '#2000', role: 'system' } as Message;
    expect(cache.observe({ messages: [reordered] })).toMatchObject({ cachedInputTokens: 1920 });
  });
});

describe('withSimulatedPromptCache', () => {
  it("reports the simulated input beside the backend's output, declares the capability, streams too", async () => {
    const inner = new ScriptedBackend([reply('one'), reply('two')], { stream: true });
    const backend = withSimulatedPromptCache(inner, { mode: 'markers', tokenizer, now: clock().now });
    expect(backend.promptCache).toEqual({ mode: 'markers', minPrefixTokens: 1024, maxMarkers: 4 });
    const messages = [sys(2000), user(100)];
    const first = await backend.generate({ messages });
    expect(first.usage).toMatchObject({ inputTokens: 2100, cachedInputTokens: 0, cacheWriteInputTokens: 2100 });
    let finish: unknown;
    for await (const part of backend.stream?.({ messages: [...messages, user(10)] }) ?? []) {
      if (part.type === 'finish') finish = part.result.usage;
    }
    expect(finish).toMatchObject({ inputTokens: 2110, cachedInputTokens: 2100, cacheWriteInputTokens: 10 });
  });

  it('counts with the harness tokenizer by default', () => {
    const cache = new SimulatedPromptCache({ mode: 'automatic' });
    const usage = cache.observe({ messages: [{ role: 'user', content: 'hello world' }] });
    expect(usage.inputTokens).toBeGreaterThan(2);
    expect(usage.inputTokens).toBeLessThan(20);
  });
});
