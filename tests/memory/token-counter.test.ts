import { describe, expect, it } from 'vitest';
import type { Message, ToolSpec } from '../../src/backend/types.js';
import {
  IMAGE_TOKENS,
  MESSAGE_OVERHEAD_TOKENS,
  REQUEST_OVERHEAD_TOKENS,
  TOOL_SPEC_OVERHEAD_TOKENS,
  TokenCounter,
  calibrate,
  uncalibrated,
} from '../../src/memory/token-counter.js';
import { gptTokenizer, warmUpTokenizer } from '../../src/memory/tokenizer.js';

function countingTokenizer() {
  const seen: string[] = [];
  return { seen, count: (text: string) => (seen.push(text), text.length) };
}

describe('TokenCounter', () => {
  it('tokenizes each message once, so a step costs what it added', () => {
    const tokenizer = countingTokenizer();
    const counter = new TokenCounter(tokenizer);
    const dialogue: Message[] = [{ role: 'user', content: 'hello' }];
    const tools: ToolSpec[] = [{ name: 't', description: 'd', inputSchema: { type: 'object' } }];
    counter.request(dialogue, tools);
    const afterFirst = tokenizer.seen.length;
    dialogue.push({ role: 'assistant', content: 'world' });
    counter.request(dialogue, tools);
    expect(tokenizer.seen.slice(afterFirst)).toEqual(['world']);
  });

  it('counts content, tool calls, tool names, images, specs and overheads', () => {
    const counter = new TokenCounter({ count: (text) => text.length });
    const messages: Message[] = [
      { role: 'assistant', content: 'ab', toolCalls: [{ id: '1', name: 'tool', arguments: '{}' }] },
      {
        role: 'tool',
        toolCallId: '1',
        toolName: 'tool',
        content: [
          { type: 'text', text: 'xyz' },
          { type: 'image', data: 'AAAA', mediaType: 'image/png' },
        ],
      },
    ];
    const assistant = MESSAGE_OVERHEAD_TOKENS + 2 + 4 + 4 + 2;
    const tool = MESSAGE_OVERHEAD_TOKENS + 3 + IMAGE_TOKENS + 4;
    expect(counter.request(messages, [])).toBe(REQUEST_OVERHEAD_TOKENS + assistant + tool);
    const spec: ToolSpec = { name: 'n', description: 'd', inputSchema: {} };
    expect(counter.tools([spec])).toBe(TOOL_SPEC_OVERHEAD_TOKENS + JSON.stringify(spec).length);
    expect(counter.request(messages, [spec, spec])).toBe(counter.request(messages, []) + 2 * counter.tools([spec]));
  });

  it('applies the calibration factor', () => {
    const plain = new TokenCounter({ count: (text) => text.length });
    const calibrated = new TokenCounter({ count: (text) => text.length }, 1.5);
    const message: Message = { role: 'user', content: 'x'.repeat(100) };
    expect(calibrated.message(message)).toBe(Math.ceil(plain.message(message) * 1.5));
  });
});

describe('TokenCounter factors', () => {
  it('applies a factor to the whole request once, and keeps one cache for every factor', () => {
    const tokenizer = countingTokenizer();
    const counter = new TokenCounter(tokenizer);
    const messages: Message[] = Array.from({ length: 10 }, (_, i) => ({ role: 'user', content: `${i}`.repeat(7) }));
    const raw = counter.request(messages, []);
    const tokenized = tokenizer.seen.length;
    // Rounded once for the request, not once per message (which would add up to ten extra tokens here).
    expect(counter.request(messages, [], 1.05)).toBe(Math.ceil(raw * 1.05));
    expect(counter.request(messages, [], 1.3)).toBe(Math.ceil(raw * 1.3));
    expect(counter.message(messages[0]!, 2)).toBe(2 * counter.message(messages[0]!));
    expect(tokenizer.seen.length).toBe(tokenized);
  });

  it('inverts a factor for budgets: the largest raw count whose calibrated count stays within the limit', () => {
    for (const factor of [1, 1.05, 1.1, 1.3, 1.365, 0.7, 2.5]) {
      for (const limit of [0, 1, 999, 24_000, 121_808]) {
        const raw = uncalibrated(limit, factor);
        expect(calibrate(raw, factor)).toBeLessThanOrEqual(limit);
        expect(calibrate(raw + 1, factor)).toBeGreaterThan(limit);
      }
    }
  });
});

describe('gptTokenizer', () => {
  it('counts with o200k_base by default and treats special-token text as text', () => {
    const tokenizer = gptTokenizer();
    expect(tokenizer.count('hello world')).toBe(2);
    expect(tokenizer.count('a <|endoftext|> b')).toBeGreaterThan(3);
    expect(tokenizer.count('')).toBe(0);
  });

  it('supports other encodings', async () => {
    await warmUpTokenizer('cl100k_base');
    expect(gptTokenizer('cl100k_base').count('hello world')).toBe(2);
  });
});
