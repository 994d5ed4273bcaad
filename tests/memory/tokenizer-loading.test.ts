import { expect, it } from 'vitest';
import type { Message } from '../../src/backend/types.js';
import { MESSAGE_OVERHEAD_TOKENS, REQUEST_OVERHEAD_TOKENS, TokenCounter } from '../../src/memory/token-counter.js';
import type { Tokenizer } from '../../src/memory/tokenizer.js';

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
