import { describe, expect, it } from 'vitest';
import type { Message, ToolSpec } from '../../src/backend/types.js';
import { reservedOutputTokens } from '../../src/llm/call-model.js';
import { requestLimits } from '../../src/memory/limits.js';
import { MemoryManager } from '../../src/memory/memory-manager.js';
import { fakeBackend, hostWorkspace, quarterTokenizer, round, scopeFor } from './helpers.js';

const tools: ToolSpec[] = [{ name: 'probe', description: 'probe', inputSchema: { type: 'object' } }];
const prefix: Message[] = [
  { role: 'system', content: 'You are an agent.' },
  { role: 'user', content: 'ORIGINAL REQUEST: compare three libraries' },
];
/** `rounds` rounds of about `tokens` tokens each (quarter tokenizer). */
const dialogueOf = (rounds: number, tokens: number) => [
  ...prefix,
  ...Array.from({ length: rounds }, (_, i) => round(`r${i}`, ['o'.repeat(tokens * 4)])).flat(),
];
const thresholds = { compressAt: 0.9, emergencyAt: 0.95 };

describe('requestLimits', () => {
  it('takes the output reserve off the window before any threshold', () => {
    const backend = fakeBackend(32_000);
    expect(requestLimits(backend, 8_000, thresholds)).toEqual({
      window: 32_000,
      reserved: 8_000,
      limit: 24_000,
      compressAt: 24_000,
    });
    expect(requestLimits(backend, 2_000, thresholds)).toEqual({
      window: 32_000,
      reserved: 2_000,
      limit: 30_000,
      compressAt: 28_800,
    });
    expect(requestLimits(backend, 500, thresholds)).toEqual({
      window: 32_000,
      reserved: 500,
      limit: 30_400,
      compressAt: 28_800,
    });
  });

  it('reserves reservedOutputTokens(window) when the request names no (valid) reserve', () => {
    const backend = fakeBackend(16_000);
    for (const reserve of [undefined, Number.NaN, -1]) {
      expect(requestLimits(backend, reserve, thresholds)).toMatchObject({
        reserved: reservedOutputTokens(16_000),
        limit: 12_000,
      });
    }
  });
});

describe('the output reserve in fitRequest and pruneAfterOverflow', () => {
  const memory = new MemoryManager({ tokenizer: quarterTokenizer });

  it('compresses a request that fits the thresholds but leaves no room for maxOutputTokens', async () => {
    const dialogue = dialogueOf(13, 2_000);
    const before = memory.countRequest(dialogue, tools);
    expect(before).toBeLessThan(0.9 * 32_000);
    expect(before).toBeGreaterThan(32_000 - 8_000);
    const scope = scopeFor(
      fakeBackend(32_000, () => 'Did 10 probes.'),
      hostWorkspace(),
    );
    const fitted = await memory.fitRequest(
      { messages: dialogue, tools, protectedCount: 2, maxOutputTokens: 8_000 },
      scope,
    );
    expect(memory.countRequest(fitted, tools) + 8_000).toBeLessThanOrEqual(32_000);
    expect(scope.events.some((e) => e.type === 'memory-compress')).toBe(true);
  });

  it('reserves reservedOutputTokens(window) when the request names none', async () => {
    // 16 000 window: reserve min(8 192, 4 000) = 4 000, so the limit is 12 000, below 0.9 × window.
    const dialogue = dialogueOf(6, 2_100);
    expect(memory.countRequest(dialogue, tools)).toBeGreaterThan(12_000);
    expect(memory.countRequest(dialogue, tools)).toBeLessThan(0.9 * 16_000);
    const scope = scopeFor(
      fakeBackend(16_000, () => 'Did 3 probes.'),
      hostWorkspace(),
    );
    const fitted = await memory.fitRequest({ messages: dialogue, tools, protectedCount: 2 }, scope);
    expect(memory.countRequest(fitted, tools)).toBeLessThanOrEqual(16_000 - reservedOutputTokens(16_000));
  });

  it('prunes after an overflow error to within the window less the reserve', () => {
    const dialogue = dialogueOf(15, 2_000);
    const rejected = memory.countRequest(dialogue, tools);
    expect(rejected).toBeGreaterThan(0.8 * 32_000 * 0.9);
    const scope = scopeFor(fakeBackend(32_000), hostWorkspace());
    const pruned = memory.pruneAfterOverflow(
      { messages: dialogue, tools, protectedCount: 2, maxOutputTokens: 16_000 },
      scope,
    );
    expect(memory.countRequest(pruned, tools)).toBeLessThanOrEqual(16_000);
    expect(scope.events).toEqual([expect.objectContaining({ type: 'memory-prune', reason: 'context-length-error' })]);
  });

  it('keeps single-shot requests (all protected) whole when they fit beside the reserve, and fails clearly when not', async () => {
    const request: Message[] = [prefix[0]!, { role: 'user', content: 'q'.repeat(4 * 20_000) }];
    const scope = scopeFor(fakeBackend(32_000), hostWorkspace());
    const fits = await memory.fitRequest(
      { messages: request, tools: [], protectedCount: 2, maxOutputTokens: 4_000 },
      scope,
    );
    expect(fits).toEqual(request);
    const error = await memory
      .fitRequest({ messages: request, tools: [], protectedCount: 2, maxOutputTokens: 16_000 }, scope)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'context-overflow', budgetTokens: 16_000 });
    expect((error as Error).message).toContain('16000 tokens reserved for the answer');
  });
});
