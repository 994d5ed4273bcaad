import { HarnessError } from '../errors.js';
import { countInBoundedParts, type TextCount } from './bounded-count.js';

/** Counts the tokens of a text; plug in your model's own tokenizer through `MemoryManager`'s `tokenizer` option. */
export interface Tokenizer {
  count(text: string): number;
  /**
   * True only when a text's count never exceeds its UTF-8 byte length (byte-level BPE, such as every gpt-tokenizer
   * encoding). The memory then sends a request whose byte length is below the compression threshold without
   * counting it; without the flag every request is counted exactly.
   */
  readonly boundedByUtf8Bytes?: boolean;
  /**
   * Optional: the count with whether it is exact; when `exact` is false, `tokens` is an upper bound (never below the
   * count). The memory treats such a figure like a byte bound: budgets may use it, calibration never learns from it.
   * `gptTokenizer` has it (see `countInBoundedParts`); without it every `count` is taken as exact.
   */
  measure?(text: string): TextCount;
}

/**
 * Characters `gptTokenizer` tokenizes in one count at most (256 Ki, tens of milliseconds of prose): a longer text counts
 * as its UTF-8 bytes, an upper bound, since tokenizing megabytes on the event loop would stall every other run.
 */
export const MAX_TOKENIZED_CHARS = 256 * 1024;

/** The gpt-tokenizer encodings `gptTokenizer` accepts. */
export const GPT_ENCODINGS = ['o200k_base', 'o200k_harmony', 'cl100k_base', 'p50k_base', 'r50k_base'] as const;

/** A gpt-tokenizer encoding name. */
export type GptEncodingName = (typeof GPT_ENCODINGS)[number];

/** The part of a gpt-tokenizer encoding module the harness uses. */
interface EncodingModule {
  countTokens(text: string, options: { disallowedSpecial: Set<string> }): number;
}

// An encoding's rank table costs tens of megabytes: load only the encodings in use, once, on first count.
const encodings = new Map<GptEncodingName, EncodingModule>();
// Tool output is untrusted text: a literal "<|endoftext|>" must count as text, not throw.
const NO_SPECIAL_TOKENS = { disallowedSpecial: new Set<string>() };

function loadEncoding(name: GptEncodingName): EncodingModule {
  let encoding = encodings.get(name);
  if (!encoding) {
    // Synchronous on purpose (counting is synchronous); gpt-tokenizer ships a CommonJS build for this.
    encoding = process.getBuiltinModule('node:module').createRequire(import.meta.url)(
      `gpt-tokenizer/encoding/${name}`,
    ) as EncodingModule;
    encodings.set(name, encoding);
  }
  return encoding;
}

/**
 * Loads gpt-tokenizer's rank table of `encoding` now, so that no run pays for it: without it the first exact count
 * of a process loads it, blocking the event loop for about 0.4 s (over 1 s on a loaded machine) and adding about
 * 70 MB of RSS. gpt-tokenizer builds the table on the thread that counts, so the load still blocks this thread once,
 * in a turn of its own after the call returns: await it while a server starts, before it takes requests. A second
 * call, or one after a run has counted, costs nothing. See docs/performance.md, "Warming up".
 */
export async function warmUpTokenizer(encoding: GptEncodingName = 'o200k_base'): Promise<void> {
  if (!(GPT_ENCODINGS as readonly string[]).includes(encoding)) {
    throw new HarnessError(
      'invalid-input',
      `warmUpTokenizer: unknown encoding ${JSON.stringify(encoding)}; use one of ${GPT_ENCODINGS.join(', ')}.`,
    );
  }
  await new Promise<void>((resolve) => setImmediate(resolve));
  loadEncoding(encoding);
}

/**
 * A {@link Tokenizer} backed by gpt-tokenizer (default encoding `o200k_base`); the encoding loads on first use. Its
 * encodings are byte-level BPE (every token stands for at least one byte), so it is `boundedByUtf8Bytes`.
 *
 * No call of the encoder receives more than 256 characters, so counting costs time linear in the text whatever it
 * holds: the count is exact, except that a stretch of more than 256 characters with no word boundary the encoding is
 * sure to keep (a run of one character, of spaces or emoji) is counted by its UTF-8 bytes, an upper bound, and
 * `measure` then says `exact: false`. A text longer than {@link MAX_TOKENIZED_CHARS} is not tokenized at all: it is
 * counted by its UTF-8 bytes (`exact: false`), so no count holds the event loop for long. docs/memory.md, "Hostile
 * text", has the figures.
 */
export function gptTokenizer(encoding: GptEncodingName = 'o200k_base'): Tokenizer {
  const countPart = (part: string): number => loadEncoding(encoding).countTokens(part, NO_SPECIAL_TOKENS);
  const measure = (text: string): TextCount =>
    text.length > MAX_TOKENIZED_CHARS
      ? { tokens: Buffer.byteLength(text, 'utf8'), exact: false }
      : countInBoundedParts(text, countPart);
  return {
    boundedByUtf8Bytes: true,
    count: (text: string): number => measure(text).tokens,
    measure,
  };
}
