import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LlmBackend, Message, ToolSpec } from '../../src/backend/types.js';
import { ContextOverflowError, HarnessError } from '../../src/errors.js';
import { reservedOutputTokens } from '../../src/llm/call-model.js';
import { isAged } from '../../src/memory/aging.js';
import { CALIBRATION_FLOOR, CALIBRATION_MARGIN } from '../../src/memory/calibration.js';
import { MemoryManager } from '../../src/memory/memory-manager.js';
import { splitRounds } from '../../src/memory/rounds.js';
import { SUMMARY_HEADER } from '../../src/memory/summary-prompt.js';
import { TokenCounter } from '../../src/memory/token-counter.js';
import { gptTokenizer, warmUpTokenizer } from '../../src/memory/tokenizer.js';
import {
  deterministicText,
  fakeBackend,
  hostWorkspace,
  invocation,
  quarterTokenizer,
  round,
  savedLines,
  scopeFor,
} from './helpers.js';
import { expectWellFormed } from './well-formed.js';

const tools: ToolSpec[] = [{ name: 'probe', description: 'probe', inputSchema: { type: 'object' } }];
const prefix: Message[] = [
  { role: 'system', content: 'You are an agent.' },
  { role: 'user', content: 'ORIGINAL REQUEST: compare three libraries' },
];

describe('MemoryManager options', () => {
  it('uses the paper defaults', () => {
    expect(new MemoryManager().options).toEqual({
      compressAt: 0.9,
      emergencyAt: 0.95,
      keepRecentRounds: 3,
      maxSummaryChars: 8000,
      visitSummaryThresholdChars: 20000,
      toolMessageChars: 8000,
      filePreviewChars: 10000,
      fileParserTokens: 20000,
      encoding: 'o200k_base',
      calibration: 1,
      observationAging: false,
    });
    expect(new MemoryManager({ observationAging: {} }).options.observationAging).toEqual({
      keepRecentRounds: 3,
      batchRounds: 8,
    });
  });

  it.each([
    [{ compressAt: 1.5 }, 'compressAt'],
    [{ emergencyAt: 0 }, 'emergencyAt'],
    [{ compressAt: 0.96, emergencyAt: 0.95 }, 'compressAt'],
    [{ toolMessageChars: -1 }, 'toolMessageChars'],
    [{ encoding: 'nope' }, 'encoding'],
  ])('rejects %o naming the option', (options, name) => {
    try {
      new MemoryManager(options as never);
      expect.unreachable();
    } catch (error) {
      expect(HarnessError.isInstance(error) && error.code).toBe('invalid-options');
      expect((error as Error).message).toContain(`memory.${name}`);
      expect((error as Error).message).toContain('allowed');
    }
  });

  it.each([
    [{ compresAt: 0.8 }, /`memory\.compresAt` is not an option \(did you mean `memory\.compressAt`\?\)/],
    [
      { observationAging: { keepRecent: 2 } },
      /`memory\.observationAging\.keepRecent` is not an option \(did you mean `memory\.observationAging\.keepRecentRounds`\?\)/,
    ],
    [
      { summaryModel: 'x' },
      /`memory\.summaryModel` is not an option; the options of `memory` are `compressAt`, .*`tokenizer`/,
    ],
  ])('rejects the misspelt option %o instead of ignoring it', (options, message) => {
    expect(() => new MemoryManager(options as never)).toThrow(message);
  });

  it('rejects a tokenizer without a count method', () => {
    expect(() => new MemoryManager({ tokenizer: {} as never })).toThrow(/memory\.tokenizer/);
  });

  it('counts with the configured encoding', async () => {
    await warmUpTokenizer('cl100k_base');
    const text = 'Größenordnung der Messwerte 東京都 नमस्ते';
    expect(new MemoryManager({ encoding: 'cl100k_base' }).countText(text)).toBe(
      gptTokenizer('cl100k_base').count(text),
    );
    expect(new MemoryManager().countText(text)).toBe(gptTokenizer('o200k_base').count(text));
    expect(gptTokenizer('cl100k_base').count(text)).not.toBe(gptTokenizer('o200k_base').count(text));
  });
});

describe('boundObservation', () => {
  it('leaves a short output alone and saves nothing', async () => {
    const ws = hostWorkspace();
    const scope = scopeFor(fakeBackend(32_000), ws);
    const out = await new MemoryManager({ tokenizer: quarterTokenizer }).boundObservation(invocation('small'), scope);
    expect(out).toBe('small');
    expect(scope.events).toEqual([]);
  });

  it('cuts generic output head-and-tail, saves the full output and names its path', async () => {
    const ws = hostWorkspace();
    const scope = scopeFor(fakeBackend(32_000), ws);
    const text = deterministicText(1, 20_000);
    const out = await new MemoryManager().boundObservation(invocation(text, 'text', 'call/7'), scope);
    expect(out.length).toBeLessThanOrEqual(8_002);
    expect(out.startsWith(text.slice(0, 1000))).toBe(true);
    expect(out.endsWith(text.slice(-1000))).toBe(true);
    const location = /\.harness\/outputs\/subtask-1\.txt lines (\d+)-(\d+)/.exec(out);
    expect(location).not.toBeNull();
    const lines = { start: Number(location![1]), end: Number(location![2]) };
    expect(savedLines(ws, '.harness/outputs/subtask-1.txt', lines)).toBe(text);
    expect(scope.events).toEqual([
      expect.objectContaining({
        type: 'memory-truncate',
        strategy: 'head-tail',
        toolName: 'probe',
        callId: 'call/7',
        scope: 'subtask-1',
        savedTo: '.harness/outputs/subtask-1.txt',
        savedLines: lines,
      }),
    ]);
    const event = scope.events[0] as { tokensBefore: number; tokensAfter: number };
    expect(event.tokensBefore).toBeGreaterThan(event.tokensAfter * 2);
  });

  it('keeps search results as whole snippets', async () => {
    const ws = hostWorkspace();
    const scope = scopeFor(fakeBackend(32_000), ws);
    const results = Array.from({ length: 100 }, (_, i) => ({
      title: `T${i}`,
      url: `https://x/${i}`,
      snippet: 's'.repeat(200),
    }));
    const out = await new MemoryManager({ tokenizer: quarterTokenizer }).boundObservation(
      invocation(JSON.stringify(results), 'search'),
      scope,
    );
    expect(out.length).toBeLessThanOrEqual(8_000);
    expect(out).toContain('results shown');
    expect(out).toContain(JSON.stringify(results[0]));
    expect(scope.events[0]).toMatchObject({ strategy: 'snippets' });
  });

  it('summarises a long page with the summarize purpose and keeps a raw prefix', async () => {
    const ws = hostWorkspace();
    const summarizer = fakeBackend(32_000, () => 'The page says X is 42.');
    const scope = scopeFor(fakeBackend(32_000), ws, summarizer);
    const page = deterministicText(2, 60_000);
    const out = await new MemoryManager().boundObservation(invocation(page, 'visit'), scope);
    expect(summarizer.calls).toHaveLength(1);
    expect(summarizer.calls[0]!.purpose).toBe('summarize');
    expect(out).toContain('The page says X is 42.');
    expect(out).toContain(page.slice(0, 2000));
    expect(out.length).toBeLessThanOrEqual(8_000);
    expect(out).toContain('.harness/outputs/');
    expect(scope.events.find((e) => e.type === 'memory-truncate')).toMatchObject({ strategy: 'summary' });
  });

  it('cuts the page so the summary request and its answer fit a small summariser window', async () => {
    const summarizer = fakeBackend(8_000, () => 'The page says X is 42.');
    const scope = scopeFor(fakeBackend(32_000), hostWorkspace(), summarizer);
    const out = await new MemoryManager().boundObservation(invocation(deterministicText(5, 200_000), 'visit'), scope);
    expect(out).toContain('The page says X is 42.');
    const call = summarizer.calls[0]!;
    expect(new TokenCounter(gptTokenizer()).request(call.messages, []) + call.maxOutputTokens!).toBeLessThanOrEqual(
      8_000,
    );
    expect(call.messages[1]!.content).toContain('middle of the page omitted');
  });

  it('falls back to head-and-tail when the page summary fails', async () => {
    const ws = hostWorkspace();
    const summarizer = fakeBackend(32_000, () => {
      throw new Error('summarizer down');
    });
    const scope = scopeFor(fakeBackend(32_000), ws, summarizer);
    const out = await new MemoryManager().boundObservation(invocation(deterministicText(3, 30_000), 'visit'), scope);
    expect(out).toContain('characters omitted');
    expect(scope.events.find((e) => e.type === 'memory-truncate')).toMatchObject({ strategy: 'head-tail' });
  });

  it('keeps a page under the visit threshold whole', async () => {
    const ws = hostWorkspace();
    const summarizer = fakeBackend(32_000);
    const text = deterministicText(4, 15_000);
    const out = await new MemoryManager().boundObservation(
      invocation(text, 'visit'),
      scopeFor(fakeBackend(32_000), ws, summarizer),
    );
    expect(out).toBe(text);
    expect(summarizer.calls).toHaveLength(0);
  });

  it('bounds file previews and shares the parser budget across one scope', async () => {
    const ws = hostWorkspace();
    const scope = scopeFor(fakeBackend(32_000), ws);
    const memory = new MemoryManager({ tokenizer: quarterTokenizer, fileParserTokens: 3_000 });
    const first = await memory.boundObservation(invocation('a'.repeat(30_000), 'file', 'f1'), scope);
    expect(first.length).toBeLessThanOrEqual(10_000);
    const second = await memory.boundObservation(invocation('b'.repeat(30_000), 'file', 'f2'), scope);
    expect(second.length).toBeLessThan(first.length);
    expect(second).toContain('file-preview budget');
    const other = await memory.boundObservation(invocation('c'.repeat(30_000), 'file', 'f3'), {
      ...scope,
      scope: 'subtask-2',
    });
    expect(other.length).toBe(first.length);
    expect(scope.events.every((e) => e.type === 'memory-truncate' && e.strategy === 'preview')).toBe(true);
  });

  it('charges whole small files to the shared parser budget and keeps the scope within it', async () => {
    const ws = hostWorkspace();
    const scope = scopeFor(fakeBackend(32_000), ws);
    const memory = new MemoryManager({ tokenizer: quarterTokenizer, fileParserTokens: 3_000 });
    const read = (text: string, callId: string, where = scope) =>
      memory.boundObservation(invocation(text, 'file', callId), where);
    // 8 000 characters = 2 000 tokens: whole, and it leaves 1 000 tokens of the budget.
    const whole = 'a'.repeat(8_000);
    expect(await read(whole, 'f1')).toBe(whole);
    const second = await read('b'.repeat(8_000), 'f2');
    expect(second).toContain('file-preview budget');
    expect(quarterTokenizer.count(second)).toBeLessThanOrEqual(1_000);
    // Spent: a read still shows a bounded glimpse.
    const third = await read('c'.repeat(8_000), 'f3');
    expect(third.length).toBeLessThanOrEqual(1_000);
    expect(third).toContain('.harness/outputs/subtask-1.txt');
    // The budget is per run and scope: a new run starts with the whole budget.
    expect(await read(whole, 'f4', { ...scope, runId: 'run-2' })).toBe(whole);
  });
});

describe('fitRequest', () => {
  const memory = new MemoryManager({ tokenizer: quarterTokenizer });
  const dialogueOf = (rounds: number, size: number) => [
    ...prefix,
    ...Array.from({ length: rounds }, (_, i) => round(`r${i}`, ['o'.repeat(size)])).flat(),
  ];

  it('returns a dialogue under compressAt × window unchanged', async () => {
    const dialogue = dialogueOf(3, 400);
    const scope = scopeFor(fakeBackend(32_000), hostWorkspace());
    await expect(memory.fitRequest({ messages: dialogue, tools, protectedCount: 2 }, scope)).resolves.toBe(dialogue);
    expect(scope.events).toEqual([]);
  });

  it('summarises earlier rounds behind the prefix and keeps the last rounds verbatim', async () => {
    const dialogue = dialogueOf(20, 8_000);
    const backend = fakeBackend(32_000, () => 'Did 17 probes; found nothing.');
    const scope = scopeFor(backend, hostWorkspace());
    const fitted = await memory.fitRequest({ messages: dialogue, tools, protectedCount: 2 }, scope);
    expect(fitted.slice(0, 2)).toEqual(prefix);
    // The summary was written from untrusted tool output: it comes back as a marked data block.
    expect(fitted[2]).toEqual({
      role: 'user',
      content: expect.stringMatching(
        /^\[Summary[^\n]*\]\n⟦data-([0-9a-f]{16})⟧\nDid 17 probes; found nothing\.\n⟦\/data-\1⟧$/,
      ),
    });
    expect((fitted[2]!.content as string).startsWith(`${SUMMARY_HEADER}\n`)).toBe(true);
    expect(fitted.slice(3)).toEqual(dialogue.slice(-6));
    expect(backend.calls[0]!.purpose).toBe('summarize');
    const request = backend.calls[0]!.messages[1]!.content as string;
    expect(request).toContain('thinking r0');
    expect(request).not.toContain('thinking r17');
    expect(scope.events.find((e) => e.type === 'memory-compress')).toMatchObject({ roundsSummarized: 17 });
    expect(memory.countRequest(fitted, tools)).toBeLessThanOrEqual(0.95 * 32_000);
  });

  it('prunes deterministically when the summary fails', async () => {
    const dialogue = dialogueOf(20, 8_000);
    const backend = fakeBackend(32_000, () => '');
    const scope = scopeFor(backend, hostWorkspace());
    const fitted = await memory.fitRequest({ messages: dialogue, tools, protectedCount: 2 }, scope);
    expect(memory.countRequest(fitted, tools)).toBeLessThanOrEqual(0.9 * 32_000);
    expect(scope.events).toContainEqual(expect.objectContaining({ type: 'memory-prune', reason: 'summary-failed' }));
    expect(scope.events.some((e) => e.type === 'memory-compress')).toBe(false);
  });

  it('prunes when the kept rounds alone exceed the emergency limit', async () => {
    const dialogue = dialogueOf(5, 45_000);
    const scope = scopeFor(fakeBackend(32_000), hostWorkspace());
    const fitted = await memory.fitRequest({ messages: dialogue, tools, protectedCount: 2 }, scope);
    expect(memory.countRequest(fitted, tools)).toBeLessThanOrEqual(0.95 * 32_000);
    expect(scope.events.map((e) => e.type)).toEqual(['llm-request', 'llm-response', 'memory-compress', 'memory-prune']);
    expect(fitted.at(-1)).toBe(dialogue.at(-1));
  });

  it('throws ContextOverflowError naming the sizes when the last round cannot fit', async () => {
    const dialogue = dialogueOf(2, 200_000);
    const scope = scopeFor(fakeBackend(32_000), hostWorkspace());
    const error = await memory
      .fitRequest({ messages: dialogue, tools, protectedCount: 2 }, scope)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContextOverflowError);
    // min(0.95 × 32 000, 32 000 − the default reserve of 8 000 output tokens)
    expect((error as ContextOverflowError).budgetTokens).toBe(24_000);
    expect((error as ContextOverflowError).requestTokens).toBeGreaterThan(50_000);
    expect((error as Error).message).toContain('the limit is 24000 tokens');
    expect((error as Error).message).toContain('8000 tokens reserved for the answer');
    const small = await memory
      .fitRequest({ messages: dialogue, tools, protectedCount: 2, maxOutputTokens: 1_000 }, scope)
      .catch((e: unknown) => e);
    expect((small as ContextOverflowError).budgetTokens).toBe(30_400);
    expect((small as Error).message).toContain('1000 tokens reserved for the answer');
  });

  it('prunes instead when the summary is longer than the rounds it replaces', async () => {
    // One small old round and three large recent ones: a 8 000-char summary would grow the dialogue.
    const dialogue = [
      ...prefix,
      ...round('r0', ['o'.repeat(400)]),
      ...Array.from({ length: 3 }, (_, i) => round(`r${i + 1}`, ['o'.repeat(38_500)])).flat(),
    ];
    const scope = scopeFor(
      fakeBackend(32_000, () => 's'.repeat(8_000)),
      hostWorkspace(),
    );
    const before = memory.countRequest(dialogue, tools);
    expect(before).toBeGreaterThan(0.9 * 32_000);
    const fitted = await memory.fitRequest({ messages: dialogue, tools, protectedCount: 2 }, scope);
    expect(memory.countRequest(fitted, tools)).toBeLessThan(before);
    expect(fitted.some((m) => typeof m.content === 'string' && m.content.startsWith(SUMMARY_HEADER))).toBe(false);
    expect(scope.events.some((e) => e.type === 'memory-compress')).toBe(false);
    expect(scope.events).toContainEqual(expect.objectContaining({ type: 'memory-prune', reason: 'summary-failed' }));
  });

  it('pruneAfterOverflow always sends less than the rejected request, even one well under the window', () => {
    const dialogue = dialogueOf(6, 8_000);
    const scope = scopeFor(fakeBackend(128_000), hostWorkspace());
    const rejected = memory.countRequest(dialogue, tools);
    expect(rejected).toBeLessThan(0.5 * 128_000);
    const pruned = memory.pruneAfterOverflow({ messages: dialogue, tools, protectedCount: 2 }, scope);
    expect(memory.countRequest(pruned, tools)).toBeLessThanOrEqual(0.8 * rejected);
    expectWellFormed(dialogue, pruned, 2);
    expect(pruned.at(-1)).toBe(dialogue.at(-1));
  });

  it('pruneAfterOverflow prunes to 0.8 × window', () => {
    const dialogue = dialogueOf(10, 10_000);
    const scope = scopeFor(fakeBackend(32_000), hostWorkspace());
    const pruned = memory.pruneAfterOverflow({ messages: dialogue, tools, protectedCount: 2 }, scope);
    expect(memory.countRequest(pruned, tools)).toBeLessThanOrEqual(0.8 * 32_000);
    expect(scope.events).toEqual([expect.objectContaining({ type: 'memory-prune', reason: 'context-length-error' })]);
  });

  it('ages old observations to digests naming the saved output', async () => {
    const ws = hostWorkspace();
    const scope = scopeFor(fakeBackend(128_000), ws);
    const aging = new MemoryManager({ tokenizer: quarterTokenizer, observationAging: { keepRecentRounds: 1 } });
    const dialogue = [...prefix];
    for (let i = 0; i < 3; i++) {
      const [assistant] = round(`r${i}`, ['x']);
      const content = await aging.boundObservation(
        { ...invocation(`output ${i} `.repeat(100)), callId: `r${i}-0` },
        scope,
      );
      dialogue.push(assistant!, { role: 'tool', toolCallId: `r${i}-0`, toolName: 'probe', content });
    }
    const fitted = await aging.fitRequest({ messages: dialogue, tools, protectedCount: 2 }, scope);
    const digest = (message: Message | undefined) => {
      const match = /full output: (\S+) lines (\d+)-(\d+)/.exec(String(message?.content));
      return match ? savedLines(ws, match[1]!, { start: Number(match[2]), end: Number(match[3]) }) : undefined;
    };
    expect(digest(fitted[3])).toBe('output 0 '.repeat(100));
    expect(digest(fitted[5])).toBe('output 1 '.repeat(100));
    expect(fitted[7]).toBe(dialogue[7]);
  });
});

describe('observation aging and prompt caching', () => {
  /** A dialogue of `rounds` rounds with one 2 000-character observation each, fitted by `memory` for `backend`. */
  async function agedDialogue(memory: MemoryManager, backend: LlmBackend, rounds: number) {
    const scope = scopeFor(backend, hostWorkspace());
    const dialogue = [...prefix];
    for (let i = 0; i < rounds; i++) dialogue.push(...round(`r${i}`, [`output ${i} `.padEnd(2_000, 'x')]));
    const fitted = await memory.fitRequest({ messages: dialogue, tools, protectedCount: 2 }, scope);
    return { fitted, scope, aged: fitted.filter(isAged).length };
  }
  const caching = (window: number): LlmBackend => ({ ...fakeBackend(window), promptCache: { mode: 'markers' } });
  const options = { tokenizer: quarterTokenizer, observationAging: { keepRecentRounds: 2, batchRounds: 4 } };

  it('ages every step where the backend does not cache, in batches where it does', async () => {
    const memory = new MemoryManager(options);
    // 5 rounds: 3 old ones hold results to age.
    expect((await agedDialogue(memory, fakeBackend(128_000), 5)).aged).toBe(3);
    expect((await agedDialogue(memory, caching(128_000), 5)).aged).toBe(0);
    expect((await agedDialogue(memory, caching(128_000), 6)).aged).toBe(4);
  });

  it('ages what waits for its batch before it would compress, and compresses only if that is not enough', async () => {
    const memory = new MemoryManager(options);
    // 5 rounds of about 500 tokens each, plus the prefix: above 0.9 × 2 800 tokens until the 3 old ones age.
    const { aged, scope } = await agedDialogue(memory, caching(2_800), 5);
    expect(aged).toBe(3);
    expect(scope.events.filter((e) => e.type === 'memory-compress' || e.type === 'memory-prune')).toEqual([]);
  });
});

describe('fitRequest properties', () => {
  const summaryArb = fc.oneof(fc.constant('fail'), fc.integer({ min: 1, max: 20_000 }));
  const dialogueArb = fc.array(
    fc.record({
      outputs: fc.array(fc.integer({ min: 0, max: 30_000 }), { maxLength: 3 }),
      reasoning: fc.integer({ min: 0, max: 2_000 }),
    }),
    { maxLength: 30 },
  );

  const optionsArb = fc
    .record({
      compressAt: fc.double({ min: 0.5, max: 0.95, noNaN: true }),
      headroom: fc.double({ min: 0, max: 0.05, noNaN: true }),
      keepRecentRounds: fc.integer({ min: 1, max: 4 }),
    })
    .map(({ compressAt, headroom, keepRecentRounds }) => ({
      compressAt,
      emergencyAt: Math.min(1, compressAt + headroom),
      keepRecentRounds,
    }));

  // What the provider counts, as a multiple of the test tokenizer: its usage reports calibrate the manager first.
  const providerRatioArb = fc.oneof(fc.constant(1), fc.double({ min: 0.7, max: 1.5, noNaN: true }));
  const reserveArb = fc.option(fc.integer({ min: 0, max: 4_000 }), { nil: undefined });

  // The same tokenizer declaring the UTF-8 bound (one token per four characters never exceeds the bytes): requests
  // far below the threshold are then sent without a count, and the guarantees must hold all the same.
  const boundedQuarterTokenizer = { ...quarterTokenizer, boundedByUtf8Bytes: true };

  it.each([
    ['counted exactly', quarterTokenizer],
    ['bounded by UTF-8 bytes', boundedQuarterTokenizer],
  ])(
    'never returns a request over the hard limit as the provider counts it, and keeps the structure (%s)',
    async (_label, tokenizer) => {
      const seen = { compress: 0, prune: 0 };
      await fc.assert(
        fc.asyncProperty(
          dialogueArb,
          summaryArb,
          fc.constantFrom(8_000, 32_000, 128_000),
          optionsArb,
          providerRatioArb,
          reserveArb,
          async (specs, summary, window, options, providerRatio, maxOutputTokens) => {
            const dialogue: Message[] = [...prefix];
            specs.forEach((spec, r) => {
              const calls = spec.outputs.map((_, i) => ({ id: `c${r}-${i}`, name: 'probe', arguments: '{}' }));
              dialogue.push({
                role: 'assistant',
                content: `r${r} ${'t'.repeat(spec.reasoning)}`,
                ...(calls.length ? { toolCalls: calls } : {}),
              });
              spec.outputs.forEach((size, i) =>
                dialogue.push({ role: 'tool', toolCallId: `c${r}-${i}`, toolName: 'probe', content: 'o'.repeat(size) }),
              );
            });
            const backend = fakeBackend(window, () => {
              if (summary === 'fail') throw new Error('no summary');
              return 's'.repeat(summary);
            });
            const memory = new MemoryManager({ tokenizer, ...options });
            const reported = Math.round(10_000 * providerRatio);
            if (providerRatio !== 1) memory.observeUsage(backend, 10_000, { inputTokens: reported, outputTokens: 0 });
            // A provider counting fewer tokens lowers the factor only down to the floor.
            const factor =
              providerRatio === 1 ? 1 : Math.max(CALIBRATION_FLOOR, (reported / 10_000) * CALIBRATION_MARGIN);
            // A counter of its own: a stale or partial count inside the manager must not hide an oversized request.
            const independent = new TokenCounter(quarterTokenizer);
            const providerCount = (messages: Message[], specs: ToolSpec[]) =>
              independent.request(messages, specs) * (reported / 10_000);
            const reserve = maxOutputTokens ?? reservedOutputTokens(window);
            const limit = Math.min(Math.floor(options.emergencyAt * window), window - reserve);
            const scope = scopeFor(backend, hostWorkspace());
            const rounds = splitRounds(dialogue, 2).rounds;
            const isSummary = (m: Message) => typeof m.content === 'string' && m.content.startsWith(SUMMARY_HEADER);
            try {
              const fitted = await memory.fitRequest(
                { messages: dialogue, tools, protectedCount: 2, maxOutputTokens },
                scope,
              );
              expect(providerCount(fitted, tools)).toBeLessThanOrEqual(limit);
              expect(providerCount(fitted, tools) + reserve).toBeLessThanOrEqual(window);
              expectWellFormed(dialogue, fitted, 2, isSummary);
              const summaryMessage = fitted.find(isSummary);
              // Header, the summary (≤ 8 000 characters) and its two marker lines.
              const markers = '\n⟦data-0123456789abcdef⟧\n\n⟦/data-0123456789abcdef⟧'.length;
              expect((summaryMessage?.content.length ?? 0) - SUMMARY_HEADER.length - markers).toBeLessThanOrEqual(
                8_000,
              );
              // The last round is always kept as it was; after a compression alone, the last keepRecentRounds rounds are.
              const pruned = scope.events.some((e) => e.type === 'memory-prune');
              const verbatim = (pruned ? rounds.slice(-1) : rounds.slice(-options.keepRecentRounds)).flat();
              const tail = fitted.slice(fitted.length - verbatim.length);
              verbatim.forEach((message, i) => expect(tail[i]).toBe(message));
              // The summariser's own requests fit its window too, with room for the answer it is allowed.
              for (const call of backend.calls) {
                expect(providerCount(call.messages, []) + (call.maxOutputTokens ?? 0)).toBeLessThanOrEqual(window);
              }
            } catch (error) {
              expect(error).toBeInstanceOf(ContextOverflowError);
              const lastAssistant = dialogue.findLastIndex((m, i) => i >= 2 && m.role === 'assistant');
              const floor = independent.request(
                [...prefix, ...(lastAssistant >= 0 ? dialogue.slice(lastAssistant) : [])],
                tools,
              );
              expect(Math.ceil(floor * factor)).toBeGreaterThan(limit);
            } finally {
              seen.compress += scope.events.filter((e) => e.type === 'memory-compress').length;
              seen.prune += scope.events.filter((e) => e.type === 'memory-prune').length;
            }
          },
        ),
        { numRuns: 200 },
      );
      // The generated dialogues must actually exercise both mechanisms.
      expect(seen.compress).toBeGreaterThan(5);
      expect(seen.prune).toBeGreaterThan(5);
    },
  );
});
