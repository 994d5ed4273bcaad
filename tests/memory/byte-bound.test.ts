import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ContentPart, Message, ToolSpec } from '../../src/backend/types.js';
import { MemoryManager } from '../../src/memory/memory-manager.js';
import { TokenCounter } from '../../src/memory/token-counter.js';
import { GPT_ENCODINGS, gptTokenizer, type Tokenizer, warmUpTokenizer } from '../../src/memory/tokenizer.js';
import { deterministicText, fakeBackend, hostWorkspace, invocation, quarterTokenizer, scopeFor } from './helpers.js';

const utf8Bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** Texts that stress a byte-level BPE: emoji sequences, CJK, combining marks, special-token text, long runs. */
const pieceArb = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'binary-ascii', maxLength: 40 }),
  fc.constantFrom(
    '😀',
    '👩🏽‍💻',
    '👨‍👩‍👧‍👦',
    '🏳️‍🌈',
    '中文字符',
    '日本語のテキスト',
    '한국어',
    'e\u0301',
    'a\u0300\u0301\u0302\u0303',
    'Z\u0324\u0354\u0367\u0311\u0313',
    '<|endoftext|>',
    '<|endofprompt|>',
    '<|im_start|>',
    '\u200b\ufeff',
    '\r\n',
  ),
  // A lone surrogate: UTF-8 encodes it as the 3-byte replacement character.
  fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code)),
  fc
    .tuple(fc.constantFrom('a', ' ', '\n', '0', '=', 'é', '中', '😀', '\u0301'), fc.integer({ min: 1, max: 2_000 }))
    .map(([char, times]) => char.repeat(times)),
);
const textArb = fc.array(pieceArb, { maxLength: 6 }).map((pieces) => pieces.join(''));

const partArb: fc.Arbitrary<ContentPart> = fc.oneof(
  textArb.map((text) => ({ type: 'text' as const, text })),
  fc.constant({ type: 'image' as const, data: 'iVBORw0KGgo=', mediaType: 'image/png' }),
);
const contentArb = fc.oneof(textArb, fc.array(partArb, { maxLength: 3 }));
const messageArb: fc.Arbitrary<Message> = fc.oneof(
  textArb.map((content) => ({ role: 'system' as const, content })),
  contentArb.map((content) => ({ role: 'user' as const, content })),
  fc
    .record({
      content: textArb,
      calls: fc.array(fc.record({ id: fc.string(), name: textArb, arguments: textArb }), { maxLength: 3 }),
    })
    .map(({ content, calls }) => ({
      role: 'assistant' as const,
      content,
      ...(calls.length > 0 ? { toolCalls: calls } : {}),
    })),
  fc
    .record({ toolName: textArb, content: contentArb })
    .map(({ toolName, content }) => ({ role: 'tool' as const, toolCallId: 'c', toolName, content })),
);
const toolsArb: fc.Arbitrary<ToolSpec[]> = fc.array(
  fc.record({ name: textArb, description: textArb, inputSchema: fc.constant({ type: 'object' }) }),
  { maxLength: 3 },
);
const factorArb = fc.oneof(fc.constant(1), fc.double({ min: 0.1, max: 10, noNaN: true }));

/** Every text a count of these messages and specs tokenizes. */
function textsOf(messages: readonly Message[], tools: readonly ToolSpec[]): string[] {
  const texts = tools.map((spec) => JSON.stringify(spec));
  for (const message of messages) {
    if (typeof message.content === 'string') texts.push(message.content);
    else for (const part of message.content) if (part.type === 'text') texts.push(part.text);
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) texts.push(call.name, call.arguments);
    if (message.role === 'tool') texts.push(message.toolName);
  }
  return texts;
}

/** Wraps the o200k tokenizer and counts the texts it is asked to tokenize. */
function spyTokenizer(): Tokenizer & { texts: number } {
  const o200k = gptTokenizer();
  const spy = {
    texts: 0,
    boundedByUtf8Bytes: true,
    count(text: string) {
      spy.texts++;
      return o200k.count(text);
    },
  };
  return spy;
}

describe('the UTF-8 byte bound', () => {
  it('is never under the o200k count of any text', () => {
    const o200k = gptTokenizer();
    fc.assert(
      fc.property(textArb, (text) => {
        expect(o200k.count(text)).toBeLessThanOrEqual(utf8Bytes(text));
      }),
      { numRuns: 500 },
    );
  });

  it.each(GPT_ENCODINGS.filter((name) => name !== 'o200k_base'))(
    'holds for %s too, which is flagged alike',
    async (name) => {
      // Counted, not bounded while loading: the property is about the encoding's counts.
      await warmUpTokenizer(name);
      const tokenizer = gptTokenizer(name);
      expect(tokenizer.boundedByUtf8Bytes).toBe(true);
      fc.assert(
        fc.property(textArb, (text) => {
          expect(tokenizer.count(text)).toBeLessThanOrEqual(utf8Bytes(text));
        }),
        { numRuns: 100 },
      );
    },
  );

  it('bounds a request from above whatever was counted before, and is the count once everything was', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(messageArb, fc.boolean()), { maxLength: 8 }),
        toolsArb,
        fc.boolean(),
        factorArb,
        (entries, tools, toolsCounted, factor) => {
          const messages = entries.map(([message]) => message);
          const exact = new TokenCounter(gptTokenizer()).request(messages, tools, factor);
          const counter = new TokenCounter(gptTokenizer());
          for (const [message, counted] of entries) if (counted) counter.message(message);
          if (toolsCounted) counter.tools(tools);
          const bound = counter.requestBound(messages, tools, factor);
          expect(bound.tokens).toBeGreaterThanOrEqual(exact);
          if (bound.exact) expect(bound.tokens).toBe(exact);
          // Bounding caches nothing as a count: counting afterwards is still exact.
          expect(counter.request(messages, tools, factor)).toBe(exact);
          // …and exact unless gpt-tokenizer bounded a long run without word boundaries instead of counting it.
          expect(counter.requestBound(messages, tools, factor)).toEqual({
            tokens: exact,
            exact: textsOf(messages, tools).every((text) => gptTokenizer().measure?.(text).exact),
          });
        },
      ),
      { numRuns: 150 },
    );
  });

  it('tokenizes nothing, and is exact only where every part was counted', () => {
    const spy = spyTokenizer();
    const counter = new TokenCounter(spy);
    const tools: ToolSpec[] = [{ name: 'probe', description: 'probe', inputSchema: { type: 'object' } }];
    const first: Message = { role: 'user', content: 'héllo 😀' };
    const second: Message = {
      role: 'assistant',
      content: 'ok',
      toolCalls: [{ id: 'c', name: 'probe', arguments: '{}' }],
    };
    const bound = counter.requestBound([first, second], tools);
    expect(spy.texts).toBe(0);
    expect(bound.exact).toBe(false);
    counter.message(first);
    counter.tools(tools);
    expect(counter.requestBound([first], tools)).toEqual({ tokens: counter.request([first], tools), exact: true });
    expect(counter.requestBound([first, second], tools).exact).toBe(false);
    expect(counter.requestBound([first], []).exact).toBe(true);
    expect(counter.textBound('héllo')).toEqual({ tokens: 6, exact: false });
  });

  it('is the exact count for a tokenizer that does not declare the bound', () => {
    const counter = new TokenCounter(quarterTokenizer);
    const messages: Message[] = [{ role: 'user', content: 'x'.repeat(400) }];
    expect(counter.requestBound(messages, [], 1.5)).toEqual({
      tokens: counter.request(messages, [], 1.5),
      exact: true,
    });
    expect(counter.textBound('x'.repeat(400))).toEqual({ tokens: 100, exact: true });
  });
});

describe('fitRequest with the byte bound', () => {
  const prefix: Message[] = [
    { role: 'system', content: 'You are an agent.' },
    { role: 'user', content: 'ORIGINAL REQUEST: collect the pages' },
  ];
  const dialogueOf = (rounds: number, chars: number): Message[] => [
    ...prefix,
    ...Array.from({ length: rounds }, (_, i): Message[] => [
      { role: 'assistant', content: '', toolCalls: [{ id: `c${i}`, name: 'fetch', arguments: `{"page":${i}}` }] },
      { role: 'tool', toolCallId: `c${i}`, toolName: 'fetch', content: deterministicText(i + 1, chars) },
    ]).flat(),
  ];

  it('sends a request whose bound is under the compression threshold without tokenizing it', async () => {
    const spy = spyTokenizer();
    const memory = new MemoryManager({ tokenizer: spy });
    const backend = fakeBackend(128_000);
    // 10 × 8 000 bytes: far below 0.9 × 128 000 even counted as one token per byte.
    const dialogue = dialogueOf(10, 8_000);
    const scope = scopeFor(backend, hostWorkspace());
    await expect(memory.fitRequest({ messages: dialogue, tools: [], protectedCount: 2 }, scope)).resolves.toBe(
      dialogue,
    );
    expect(spy.texts).toBe(0);
    const size = memory.sizeRequest(dialogue, [], backend);
    expect(spy.texts).toBe(0);
    expect(size.exact).toBe(false);
    expect(size.tokens).toBeLessThanOrEqual(0.9 * 128_000);
    expect(size.tokens).toBeGreaterThanOrEqual(new TokenCounter(gptTokenizer()).request(dialogue, []));
    expect(scope.events).toEqual([]);
  });

  it('counts exactly near the threshold, each message once, and then sizes the request exactly', async () => {
    const spy = spyTokenizer();
    const memory = new MemoryManager({ tokenizer: spy });
    const backend = fakeBackend(32_000);
    // 14 × 2 000 bytes: over the 24 000-token threshold as bytes (32 000 less the 8 000-token answer reserve),
    // about a quarter of it as tokens.
    const dialogue = dialogueOf(14, 2_000);
    const scope = scopeFor(backend, hostWorkspace());
    const fitted = await memory.fitRequest({ messages: dialogue, tools: [], protectedCount: 2 }, scope);
    expect(fitted).toBe(dialogue);
    const tokenized = spy.texts;
    expect(tokenized).toBeGreaterThan(0);
    const exact = memory.countRequest(dialogue, [], backend);
    expect(memory.sizeRequest(dialogue, [], backend)).toEqual({ tokens: exact, exact: true });
    expect(spy.texts).toBe(tokenized);
    expect(exact).toBe(new TokenCounter(gptTokenizer()).request(dialogue, []));
  });

  it('still compresses a request over the threshold and sends it within the limit, sized exactly', async () => {
    const spy = spyTokenizer();
    const memory = new MemoryManager({ tokenizer: spy });
    const backend = fakeBackend(32_000, () => 'Fetched pages 0-39.');
    const dialogue = dialogueOf(40, 8_000);
    const scope = scopeFor(backend, hostWorkspace());
    const fitted = await memory.fitRequest({ messages: dialogue, tools: [], protectedCount: 2 }, scope);
    expect(scope.events.some((e) => e.type === 'memory-compress')).toBe(true);
    const size = memory.sizeRequest(fitted, [], backend);
    expect(size.exact).toBe(true);
    expect(size.tokens).toBe(new TokenCounter(gptTokenizer()).request(fitted, []));
    expect(size.tokens).toBeLessThanOrEqual(0.95 * 32_000);
  });

  it('does not calibrate the summariser from a page summary whose input was only bounded', async () => {
    const summarizer = fakeBackend(
      128_000,
      () => 'A page of measurements.',
      () => ({
        inputTokens: 9_000,
        outputTokens: 10,
      }),
    );
    const memory = new MemoryManager();
    const scope = scopeFor(fakeBackend(128_000), hostWorkspace(), summarizer);
    const page = deterministicText(7, 30_000);
    await memory.boundObservation(invocation(page, 'visit'), scope);
    expect(summarizer.calls).toHaveLength(1);
    const request = scope.events.find((e) => e.type === 'llm-request' && e.purpose === 'summarize');
    // The request's size is reported as its bound: at least what was sent, tokenized.
    const sent = summarizer.calls[0]!;
    expect(request).toMatchObject({ requestTokens: expect.any(Number) });
    const requestTokens = (request as { requestTokens: number }).requestTokens;
    expect(requestTokens).toBeGreaterThanOrEqual(new TokenCounter(gptTokenizer()).request(sent.messages, []));
    expect(memory.countText(page, summarizer)).toBe(memory.countText(page));
  });
});
