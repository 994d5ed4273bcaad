import { createRequire } from 'node:module';
import { describe, expect, it, vi } from 'vitest';
import type { Message } from '../../src/backend/types.js';
import { MESSAGE_OVERHEAD_TOKENS, REQUEST_OVERHEAD_TOKENS, TokenCounter } from '../../src/memory/token-counter.js';
import { gptTokenizer, type Tokenizer } from '../../src/memory/tokenizer.js';
import { TokenizerThread } from '../../src/memory/tokenizer-thread.js';

/** A tokenizer that bounds every text by its length while "loading", then counts one token per character pair. */
function loadingTokenizer() {
  let loaded = false;
  let finish = () => {};
  const ready = new Promise<void>((resolve) => {
    finish = () => {
      loaded = true;
      resolve();
    };
  });
  const tokenizer: Tokenizer = {
    boundedByUtf8Bytes: true,
    count: (text) => tokenizer.measure?.(text).tokens ?? 0,
    measure: (text) =>
      loaded
        ? { tokens: Math.ceil(text.length / 2), exact: true }
        : { tokens: text.length, exact: false, loading: true },
    ready: () => ready,
  };
  return { tokenizer, finish };
}

it('keeps no figure taken while the tokenizer loads: the same message is counted once it has loaded', async () => {
  const { tokenizer, finish } = loadingTokenizer();
  const counter = new TokenCounter(tokenizer);
  const dialogue: Message[] = [{ role: 'user', content: 'abcdefgh' }];
  const overhead = REQUEST_OVERHEAD_TOKENS + MESSAGE_OVERHEAD_TOKENS;
  expect(counter.request(dialogue, [])).toBe(overhead + 8);
  // Not cached, so the figure is still a bound.
  expect(counter.requestBound(dialogue, []).exact).toBe(false);
  let ready = false;
  const waiting = counter.ready().then(() => {
    ready = true;
  });
  await Promise.resolve();
  expect(ready).toBe(false);
  finish();
  await waiting;
  expect(counter.request(dialogue, [])).toBe(overhead + 4);
  expect(counter.requestBound(dialogue, [])).toEqual({ tokens: overhead + 4, exact: true });
});

it('is ready at once with a tokenizer that has no loading phase', async () => {
  await expect(new TokenCounter({ count: (text) => text.length }).ready()).resolves.toBeUndefined();
});

describe('TokenizerThread', () => {
  it('counts parts past one exchange (128 Ki characters, 4 096 parts) as gpt-tokenizer does on this thread', async () => {
    const modulePath = createRequire(import.meta.url).resolve('gpt-tokenizer/encoding/o200k_base');
    const thread = new TokenizerThread(modulePath);
    await thread.loaded;
    const o200k = createRequire(import.meta.url)(modulePath) as {
      countTokens(text: string, options: { disallowedSpecial: Set<string> }): number;
    };
    const noSpecial = { disallowedSpecial: new Set<string>() };
    const long = Array.from({ length: 600 }, (_, i) => `Part ${i}: the river runs north, then west. `.repeat(6));
    const short = Array.from({ length: 5_000 }, (_, i) => `w${i} <|endoftext|>`);
    for (const parts of [long, short, []]) {
      const expected = parts.reduce((sum, part) => sum + o200k.countTokens(part, noSpecial), 0);
      expect(thread.countParts(parts)).toBe(expected);
    }
    expect(long.join('').length).toBeGreaterThan(128 * 1024);
  });

  it('says so when no worker thread can start', async () => {
    const getBuiltinModule = process.getBuiltinModule;
    const stub = vi.spyOn(process, 'getBuiltinModule').mockImplementation(((id: string) => {
      if (id === 'node:worker_threads') throw new Error('no worker threads here');
      return getBuiltinModule(id);
    }) as typeof process.getBuiltinModule);
    try {
      const thread = new TokenizerThread('/unused.js');
      await expect(thread.loaded).rejects.toThrow(/no worker threads/);
      expect(thread.failed).toBe(true);
    } finally {
      stub.mockRestore();
    }
  });

  it('says so when its worker cannot load the encoding, and counts nothing', async () => {
    const thread = new TokenizerThread('/no/such/encoding.js');
    await expect(thread.loaded).rejects.toThrow(/Cannot find module/);
    expect(thread.failed).toBe(true);
    expect(thread.ready).toBe(false);
    expect(thread.countParts(['hello'])).toBeUndefined();
  });
});

it('gptTokenizer counts on the calling thread, exactly, when its worker could not load the encoding', () => {
  const failed = vi.spyOn(TokenizerThread.prototype, 'failed', 'get').mockReturnValue(true);
  const ready = vi.spyOn(TokenizerThread.prototype, 'ready', 'get').mockReturnValue(false);
  try {
    expect(gptTokenizer('r50k_base').measure?.('hello world')).toEqual({ tokens: 2, exact: true });
  } finally {
    failed.mockRestore();
    ready.mockRestore();
  }
});
