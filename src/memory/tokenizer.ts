import { HarnessError } from '../errors.js';
import { splitForCounting, type TextCount } from './bounded-count.js';
import { TokenizerThread } from './tokenizer-thread.js';

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
  /**
   * Optional: resolves once `measure` counts (until then it may answer every text with a bound marked `loading`, as
   * `gptTokenizer` does while its tables load in a worker thread). The memory awaits it before a decision that needs
   * a count; nothing else waits for it.
   */
  ready?(): Promise<void>;
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

// An encoding's rank table costs tens of megabytes and 0.3–0.7 s of CPU to build: only the encodings in use are
// loaded, once per process, each in a worker thread of its own started by the first count (see tokenizer-thread.ts).
const threads = new Map<GptEncodingName, TokenizerThread>();
// Encodings loaded on this thread, only where a worker could not load them (see `countParts`).
const encodings = new Map<GptEncodingName, EncodingModule>();
// Tool output is untrusted text: a literal "<|endoftext|>" must count as text, not throw.
const NO_SPECIAL_TOKENS = { disallowedSpecial: new Set<string>() };

const requireHere = () => process.getBuiltinModule('node:module').createRequire(import.meta.url);

function threadOf(name: GptEncodingName): TokenizerThread {
  let thread = threads.get(name);
  if (!thread) {
    // Resolved here, so that the worker loads the very copy of gpt-tokenizer this module would.
    thread = new TokenizerThread(requireHere().resolve(`gpt-tokenizer/encoding/${name}`));
    threads.set(name, thread);
  }
  return thread;
}

/** The encoding loaded on this thread, blocking it for the load: the fallback when its worker failed. */
function loadEncoding(name: GptEncodingName): EncodingModule {
  let encoding = encodings.get(name);
  if (!encoding) {
    // Synchronous on purpose (counting is synchronous); gpt-tokenizer ships a CommonJS build for this.
    encoding = requireHere()(`gpt-tokenizer/encoding/${name}`) as EncodingModule;
    encodings.set(name, encoding);
  }
  return encoding;
}

/** The parts' summed counts, or `undefined` while the encoding's worker is loading it. */
function countParts(name: GptEncodingName, parts: readonly string[]): number | undefined {
  const thread = threadOf(name);
  if (!thread.failed) return thread.countParts(parts);
  // A worker that could not load the encoding (no worker threads, a module it could not require): count here, as
  // before workers, which throws the loader's own error when gpt-tokenizer is missing.
  const encoding = loadEncoding(name);
  let sum = 0;
  for (const part of parts) sum += encoding.countTokens(part, NO_SPECIAL_TOKENS);
  return sum;
}

/** Resolves once `name` counts exactly: its worker loaded it, or (when the worker failed) this thread did. */
async function encodingReady(name: GptEncodingName): Promise<void> {
  try {
    await threadOf(name).loaded;
  } catch {
    loadEncoding(name);
  }
}

/**
 * Loads gpt-tokenizer's rank table of `encoding` now, in a worker thread, and resolves once counts are exact. Without
 * it, the first count of a process starts the load and counts are UTF-8 byte bounds until it finishes (0.3–0.7 s,
 * over 1 s on a loaded machine; a run that needs an exact count to decide on compression waits for it without
 * blocking). The load never runs on the calling thread's event loop; the table adds about 70 MB of RSS. A second
 * call, or one after the load, costs nothing. See docs/performance.md, "Warming up".
 */
export async function warmUpTokenizer(encoding: GptEncodingName = 'o200k_base'): Promise<void> {
  if (!(GPT_ENCODINGS as readonly string[]).includes(encoding)) {
    throw new HarnessError(
      'invalid-input',
      `warmUpTokenizer: unknown encoding ${JSON.stringify(encoding)}; use one of ${GPT_ENCODINGS.join(', ')}.`,
    );
  }
  await encodingReady(encoding);
}

/**
 * A {@link Tokenizer} backed by gpt-tokenizer (default encoding `o200k_base`). Its encodings are byte-level BPE (every
 * token stands for at least one byte), so it is `boundedByUtf8Bytes`.
 *
 * The encoding loads in a worker thread, started by the first count (or {@link warmUpTokenizer}), and is counted
 * there: a count waits synchronously for the worker's answer, the event loop never runs the table's load. Until the
 * load finishes, `measure` answers a text's UTF-8 bytes (`exact: false`, `loading: true`), an upper bound, and
 * `ready()` resolves once it counts. Counts are then the same as gpt-tokenizer's on the calling thread.
 *
 * No call of the encoder receives more than 256 characters, so counting costs time linear in the text whatever it
 * holds: the count is exact, except that a stretch of more than 256 characters with no word boundary the encoding is
 * sure to keep (a run of one character, of spaces or emoji) is counted by its UTF-8 bytes, an upper bound, and
 * `measure` then says `exact: false`. A text longer than {@link MAX_TOKENIZED_CHARS} is not tokenized at all: it is
 * counted by its UTF-8 bytes (`exact: false`), so no count holds the event loop for long. docs/memory.md, "Hostile
 * text", has the figures.
 */
export function gptTokenizer(encoding: GptEncodingName = 'o200k_base'): Tokenizer {
  const measure = (text: string): TextCount => {
    if (text.length > MAX_TOKENIZED_CHARS) return { tokens: utf8Bytes(text), exact: false };
    // Splitting costs a scan of the text: not worth it while the worker cannot count the parts anyway.
    const thread = threadOf(encoding);
    if (!thread.ready && !thread.failed) return loading(text);
    const { parts, uncountedBytes, exact } = splitForCounting(text);
    const counted = countParts(encoding, parts);
    return counted === undefined ? loading(text) : { tokens: uncountedBytes + counted, exact };
  };
  return {
    boundedByUtf8Bytes: true,
    count: (text: string): number => measure(text).tokens,
    measure,
    ready: () => encodingReady(encoding),
  };
}

const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/** A text's figure while the encoding loads: its UTF-8 bytes, which no count exceeds. */
const loading = (text: string): TextCount => ({ tokens: utf8Bytes(text), exact: false, loading: true });
