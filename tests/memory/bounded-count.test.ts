import { createRequire } from 'node:module';
import fc from 'fast-check';
import { afterEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { z } from 'zod';
import { createHarness } from '../../src/harness/harness.js';
import { countInBoundedParts, MAX_COUNTED_CHARS } from '../../src/memory/bounded-count.js';
import { MemoryManager } from '../../src/memory/memory-manager.js';
import { type GptEncodingName, gptTokenizer, MAX_TOKENIZED_CHARS } from '../../src/memory/tokenizer.js';
import { TokenizerThread } from '../../src/memory/tokenizer-thread.js';
import { reply, submit, toolCall } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { fakeBackend } from './helpers.js';

interface EncodingModule {
  countTokens(text: string, options: { disallowedSpecial: Set<string> }): number;
}
// The reference: gpt-tokenizer's encoding loaded on this thread.
const load = (name: GptEncodingName) =>
  createRequire(import.meta.url)(`gpt-tokenizer/encoding/${name}`) as EncodingModule;
const NO_SPECIAL = { disallowedSpecial: new Set<string>() };
const utf8Bytes = (text: string) => Buffer.byteLength(text, 'utf8');

let spy: MockInstance<TokenizerThread['countParts']> | undefined;
afterEach(() => {
  spy?.mockRestore();
  spy = undefined;
});

/**
 * Records the length of every text the o200k encoder is given (gptTokenizer hands its worker thread the parts to
 * count, each a separate encoder call). A part longer than the cap is answered with its byte length instead of being
 * tokenized, so the code before the fix fails the test instead of hanging for minutes.
 */
function spyOnEncoder(): number[] {
  const real = TokenizerThread.prototype.countParts;
  const lengths: number[] = [];
  spy = vi.spyOn(TokenizerThread.prototype, 'countParts').mockImplementation(function (this: TokenizerThread, parts) {
    for (const part of parts) lengths.push(part.length);
    return parts.some((part) => part.length > MAX_COUNTED_CHARS)
      ? parts.reduce((sum, part) => sum + utf8Bytes(part), 0)
      : real.call(this, parts);
  });
  return lengths;
}

// Characters of every class the split patterns treat apart: letters (cased, uncased, with combining marks), digits,
// the apostrophe of contractions, slash, punctuation, symbols, emoji, spaces, tabs, line breaks, non-breaking and
// ideographic spaces, a lone surrogate, and special-token text.
const ALPHABET = [
  'a',
  'B',
  'é',
  'e\u0301',
  '\u0301',
  'ß',
  '中',
  'ก',
  'ั',
  '1',
  '²',
  '٣',
  "'",
  's',
  'll',
  '/',
  '.',
  '!',
  '-',
  '€',
  '😀',
  '👩🏽‍💻',
  ' ',
  '  ',
  '\t',
  '\n',
  '\r\n',
  '\r',
  '\u00a0',
  '\u3000',
  '\ud800',
  '<|endoftext|>',
];
const mixedText = fc
  .array(fc.oneof(fc.constantFrom(...ALPHABET), fc.string({ unit: 'binary', maxLength: 6 })), { maxLength: 60 })
  .map((parts) => parts.join(''));

describe('counting in bounded parts', () => {
  it.each(['o200k_base', 'cl100k_base', 'r50k_base'] as const)(
    'adds up to the whole text’s %s count exactly, or bounds it from above and says so',
    (name) => {
      const encoding = load(name);
      const countPart = (part: string) => encoding.countTokens(part, NO_SPECIAL);
      fc.assert(
        fc.property(mixedText, fc.integer({ min: 4, max: 24 }), (text, maxChars) => {
          const parts: string[] = [];
          const result = countInBoundedParts(
            text,
            (part) => {
              parts.push(part);
              return countPart(part);
            },
            maxChars,
          );
          const whole = countPart(text);
          expect(result.tokens).toBeGreaterThanOrEqual(whole);
          if (result.exact) expect(result.tokens).toBe(whole);
          for (const part of parts) expect(part.length).toBeLessThanOrEqual(maxChars);
          // Each character is tokenized at most once: the work is linear in the text.
          expect(parts.join('').length).toBeLessThanOrEqual(text.length);
        }),
        { numRuns: 400 },
      );
    },
  );

  it('counts prose exactly, in parts no longer than the cap', () => {
    const prose = 'The quick brown fox jumps over the lazy dog; it’s 42 km/h!\nNext line, “quoted” — done. '.repeat(
      200,
    );
    const whole = load('o200k_base').countTokens(prose, NO_SPECIAL);
    const lengths = spyOnEncoder();
    expect(gptTokenizer().measure?.(prose)).toEqual({ tokens: whole, exact: true });
    expect(Math.max(...lengths)).toBeLessThanOrEqual(MAX_COUNTED_CHARS);
  });
});

/** Degenerate texts of up to 10 MB: one character, two alternating, digit runs, emoji runs, random bytes. */
const degenerate = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('a', ' ', '\n', '\t', '=', '中', 'ก', '😀', '\u0301', '0'),
      fc.integer({ min: 1, max: 10_000_000 }),
    )
    .map(([char, length]) => char.repeat(Math.ceil(length / char.length))),
  fc
    .tuple(
      fc.constantFrom('ab', 'a ', 'a\n', ' \n', '!?', '😀😺', 'a1', '中文'),
      fc.integer({ min: 1, max: 5_000_000 }),
    )
    .map(([pair, times]) => pair.repeat(times)),
  fc.integer({ min: 1, max: 10_000_000 }).map((length) => '7'.repeat(length)),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 200_000 }),
);

describe('gptTokenizer on hostile text', () => {
  it('never hands the encoder more than the cap, nor any character twice', () => {
    const lengths = spyOnEncoder();
    const tokenizer = gptTokenizer();
    fc.assert(
      fc.property(degenerate, (text) => {
        lengths.length = 0;
        const tokens = tokenizer.count(text);
        expect(Math.max(0, ...lengths)).toBeLessThanOrEqual(MAX_COUNTED_CHARS);
        expect(lengths.reduce((sum, length) => sum + length, 0)).toBeLessThanOrEqual(text.length);
        expect(tokens).toBeLessThanOrEqual(utf8Bytes(text));
      }),
      // Shrinking texts of megabytes would take longer than the property: report the first failure as it is.
      {
        numRuns: 20,
        endOnFailure: true,
        examples: [['a'.repeat(10_000_000)], ['😀'.repeat(5_000_000)], [' '.repeat(400_000)]],
      },
    );
    // Tens of megabytes are scanned: generous on a loaded machine; the assertions count, they do not time.
  }, 180_000);

  it('counts a text past MAX_TOKENIZED_CHARS by its bytes without tokenizing any of it', () => {
    const lengths = spyOnEncoder();
    const prose = 'The river runs north, then west; 42 bridges cross it. '.repeat(20_000);
    expect(prose.length).toBeGreaterThan(MAX_TOKENIZED_CHARS);
    expect(gptTokenizer().measure?.(prose)).toEqual({ tokens: utf8Bytes(prose), exact: false });
    expect(lengths).toEqual([]);
    // At the cap it is still counted exactly, in parts.
    const atCap = prose.slice(0, MAX_TOKENIZED_CHARS);
    expect(gptTokenizer().measure?.(atCap).exact).toBe(true);
    expect(lengths.length).toBeGreaterThan(0);
  });

  it('bounds a degenerate text from above against the real count', () => {
    const o200k = load('o200k_base');
    for (const text of [
      'a'.repeat(3_000),
      ' '.repeat(3_000),
      '\n'.repeat(3_000),
      '😀'.repeat(1_500),
      'ab'.repeat(1_500),
    ]) {
      const measured = gptTokenizer().measure?.(text);
      expect(measured?.exact).toBe(false);
      expect(measured?.tokens).toBeGreaterThanOrEqual(o200k.countTokens(text, NO_SPECIAL));
    }
  });
});

describe('a hostile page through the harness', () => {
  const page = 'a'.repeat(400_000);
  const visitLike = defineTool({
    name: 'read_page',
    description: 'Returns a page.',
    input: z.object({}),
    observation: 'visit',
    execute: async () => ({ text: page }),
  });

  it('summarises a 400 KB one-letter page without one long encoder call', async () => {
    const lengths = spyOnEncoder();
    const backend = new ScriptedBackend({
      execute: [toolCall('read_page'), submit('read it')],
      summarize: [reply('A page of the letter a.')],
    });
    const harness = createHarness({
      backend,
      tools: [visitLike],
      decomposition: false,
      verification: false,
      store: false,
    });
    const result = await harness.run('read the page');
    await harness.close();
    expect(result.status).toBe('succeeded');
    expect(backend.callsFor('summarize')).toHaveLength(1);
    expect(lengths.length).toBeGreaterThan(0);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(MAX_COUNTED_CHARS);
  });

  it('sizes a counted request holding such a run as a bound, which calibration skips', () => {
    const memory = new MemoryManager();
    const backend = fakeBackend(1_000_000);
    const messages = [{ role: 'user' as const, content: page }];
    // Counted (as fitRequest does near the threshold), yet a bound: the letter run has no word boundary.
    expect(memory.countRequest(messages, [], backend)).toBeGreaterThanOrEqual(page.length);
    expect(memory.sizeRequest(messages, [], backend).exact).toBe(false);
  });
});
