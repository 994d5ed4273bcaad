import type { Message, ToolSpec } from '../backend/types.js';
import type { TextCount } from './bounded-count.js';
import type { Tokenizer } from './tokenizer.js';

/** Tokens every message costs beyond its content (role and separators, as chat formats add them). */
export const MESSAGE_OVERHEAD_TOKENS = 4;
/** Tokens every tool call costs beyond its name and arguments. */
export const TOOL_CALL_OVERHEAD_TOKENS = 4;
/** Tokens every tool spec costs beyond its JSON text. */
export const TOOL_SPEC_OVERHEAD_TOKENS = 8;
/** Tokens one request costs beyond its messages (reply priming). */
export const REQUEST_OVERHEAD_TOKENS = 3;
/** Estimate for one image part; providers bill images by size, which the text tokenizer cannot see. */
export const IMAGE_TOKENS = 1_000;

/**
 * Counts request tokens with a per-object cache: a message (or a tool-spec array) is tokenized once,
 * so the cost of counting a step is proportional to what the step added. Messages must not be
 * mutated after they were counted; the harness replaces messages instead of editing them.
 *
 * The cache holds uncalibrated counts; a calibration factor is applied to each result (to a whole request at once,
 * so per-message rounding does not add up), and every method takes the factor to use, defaulting to the one given
 * to the constructor. One counter therefore serves backends with different factors.
 *
 * With a tokenizer that is `boundedByUtf8Bytes`, {@link requestBound} and {@link textBound} give an upper bound
 * without tokenizing: a text's UTF-8 byte length where it has no cached count.
 *
 * A tokenizer's `measure` may answer a bound instead of a count (gpt-tokenizer does for a long stretch without word
 * boundaries, see `countInBoundedParts`): the figures stay upper bounds, and every figure built on one says
 * `exact: false`, so calibration never learns from it.
 */
export class TokenCounter {
  private readonly messages = new WeakMap<Message, number>();
  private readonly specs = new WeakMap<readonly ToolSpec[], number>();
  // Byte bounds, cached like the counts: a dialogue is bounded again at every step.
  private readonly messageBounds = new WeakMap<Message, number>();
  private readonly specBounds = new WeakMap<readonly ToolSpec[], number>();
  // Messages and spec arrays whose cached count holds a tokenizer's bound rather than a count.
  private readonly overCounted = new WeakSet<object>();
  // Characters and tokens of everything counted so far: the ratio behind `estimate`.
  private sampledChars = 0;
  private sampledTokens = 0;

  constructor(
    private readonly tokenizer: Tokenizer,
    /** The default factor on every count, to correct for a model whose tokenizer differs from the one used. */
    private readonly calibration = 1,
  ) {}

  /**
   * Resolves once the tokenizer counts instead of bounding every text (see `Tokenizer.ready`); at once for a
   * tokenizer without that method.
   */
  async ready(): Promise<void> {
    await this.tokenizer.ready?.();
  }

  /** Tokens of a text, calibrated (an upper bound when the tokenizer could only bound it; see {@link measureText}). */
  text(text: string, factor = this.calibration): number {
    return calibrate(this.count(text).tokens, factor);
  }

  /** {@link TokenCounter.text}'s figure and whether it is an exact count rather than the tokenizer's upper bound. */
  measureText(text: string, factor = this.calibration): TextCount {
    const { tokens, exact } = this.count(text);
    return { tokens: calibrate(tokens, factor), exact };
  }

  /**
   * Tokens of a text estimated from the characters per token of the texts counted so far (4 before any), without
   * tokenizing it: for event figures on the hot path, never for budgets.
   */
  estimate(text: string, factor = this.calibration): number {
    const charsPerToken = this.sampledTokens > 0 ? this.sampledChars / this.sampledTokens : 4;
    return calibrate(Math.ceil(text.length / charsPerToken), factor);
  }

  /** Tokens of one message including its overhead, calibrated; tokenized once per message object. */
  message(message: Message, factor = this.calibration): number {
    return calibrate(this.rawMessage(message), factor);
  }

  /** Tokens of the tool specs offered with a request, calibrated; tokenized once per array. */
  tools(tools: readonly ToolSpec[], factor = this.calibration): number {
    return calibrate(this.rawTools(tools), factor);
  }

  /** Tokens of a whole request (overhead, tool specs and every message), with the factor applied to the total. */
  request(messages: readonly Message[], tools: readonly ToolSpec[], factor = this.calibration): number {
    let total = REQUEST_OVERHEAD_TOKENS + this.rawTools(tools);
    for (const message of messages) total += this.rawMessage(message);
    return calibrate(total, factor);
  }

  /**
   * At least {@link request}'s figure for the same arguments, tokenizing nothing: per message (and for the tool
   * specs) the cached count when it was counted before, else the UTF-8 bytes of its texts plus the same overheads
   * (images as in the count). `exact` is true when every part was a count, and then `tokens` is the count. A
   * tokenizer that is not `boundedByUtf8Bytes` has no such bound: the request is counted. A part the tokenizer
   * could only bound makes the figure inexact too.
   */
  requestBound(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    factor = this.calibration,
  ): { tokens: number; exact: boolean } {
    if (!this.tokenizer.boundedByUtf8Bytes) {
      const tokens = this.request(messages, tools, factor);
      return { tokens, exact: messages.every((m) => !this.overCounted.has(m)) && !this.overCounted.has(tools) };
    }
    let exact = true;
    let total = REQUEST_OVERHEAD_TOKENS;
    const specTokens = tools.length === 0 ? 0 : this.specs.get(tools);
    if (specTokens === undefined) {
      exact = false;
      total += this.boundTools(tools);
    } else {
      total += specTokens;
      if (this.overCounted.has(tools)) exact = false;
    }
    for (const message of messages) {
      const tokens = this.messages.get(message);
      if (tokens === undefined) {
        exact = false;
        total += this.boundMessage(message);
      } else {
        total += tokens;
        if (this.overCounted.has(message)) exact = false;
      }
    }
    // Calibration is monotonic: a larger raw figure never yields a smaller calibrated one.
    return { tokens: calibrate(total, factor), exact };
  }

  /**
   * At least {@link TokenCounter.text}'s figure, calibrated: the text's UTF-8 byte length, not exact; a tokenizer that is not
   * `boundedByUtf8Bytes` counts it (exact).
   */
  textBound(text: string, factor = this.calibration): { tokens: number; exact: boolean } {
    if (!this.tokenizer.boundedByUtf8Bytes) return this.measureText(text, factor);
    return { tokens: calibrate(utf8Bytes(text), factor), exact: false };
  }

  private rawMessage(message: Message): number {
    let tokens = this.messages.get(message);
    if (tokens === undefined) {
      const sized = this.sized((measure) => MESSAGE_OVERHEAD_TOKENS + messageSize(message, measure));
      tokens = sized.tokens;
      this.remember(this.messages, message, sized);
    }
    return tokens;
  }

  private rawTools(tools: readonly ToolSpec[]): number {
    let tokens = this.specs.get(tools);
    if (tokens === undefined) {
      const sized = this.sized((measure) => toolsSize(tools, measure));
      tokens = sized.tokens;
      this.remember(this.specs, tools, sized);
    }
    return tokens;
  }

  /** `size` with every text counted by the tokenizer, and whether all were counts, or bounds while it loads. */
  private sized(size: (measure: (text: string) => number) => number): TextCount {
    let exact = true;
    let loading = false;
    const tokens = size((text) => {
      const measured = this.count(text);
      exact &&= measured.exact;
      loading ||= measured.loading === true;
      return measured.tokens;
    });
    return { tokens, exact, loading };
  }

  /** Caches a count; a figure taken while the tokenizer loads is not kept, so the next use counts it. */
  private remember<K extends object>(cache: WeakMap<K, number>, key: K, sized: TextCount): void {
    if (sized.loading) return;
    cache.set(key, sized.tokens);
    if (!sized.exact) this.overCounted.add(key);
  }

  private boundMessage(message: Message): number {
    let bound = this.messageBounds.get(message);
    if (bound === undefined) {
      bound = MESSAGE_OVERHEAD_TOKENS + messageSize(message, utf8Bytes);
      this.messageBounds.set(message, bound);
    }
    return bound;
  }

  private boundTools(tools: readonly ToolSpec[]): number {
    let bound = this.specBounds.get(tools);
    if (bound === undefined) {
      bound = toolsSize(tools, utf8Bytes);
      this.specBounds.set(tools, bound);
    }
    return bound;
  }

  private count(text: string): TextCount {
    const measured = this.tokenizer.measure?.(text) ?? { tokens: this.tokenizer.count(text), exact: true };
    // Only counts teach `estimate` the characters per token; a byte bound would skew it.
    if (measured.exact) {
      this.sampledChars += text.length;
      this.sampledTokens += measured.tokens;
    }
    return measured;
  }
}

const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/**
 * A message's size without its overhead, each text measured by `measure` (the tokenizer, or a bound on it): the one
 * shape the count and the bound share, so the bound covers exactly what the count counts.
 */
function messageSize(message: Message, measure: (text: string) => number): number {
  let size = 0;
  if (typeof message.content === 'string') {
    size += measure(message.content);
  } else {
    for (const part of message.content) size += part.type === 'text' ? measure(part.text) : IMAGE_TOKENS;
  }
  if (message.role === 'assistant' && message.toolCalls) {
    for (const call of message.toolCalls)
      size += TOOL_CALL_OVERHEAD_TOKENS + measure(call.name) + measure(call.arguments);
  }
  if (message.role === 'tool') size += measure(message.toolName);
  return size;
}

/** The tool specs' size, each spec's JSON text measured by `measure`. */
function toolsSize(tools: readonly ToolSpec[], measure: (text: string) => number): number {
  let size = 0;
  for (const spec of tools) size += TOOL_SPEC_OVERHEAD_TOKENS + measure(JSON.stringify(spec));
  return size;
}

/** An uncalibrated count times `factor`, rounded up (exact when the factor is 1). @internal */
export function calibrate(raw: number, factor: number): number {
  return factor === 1 ? raw : Math.ceil(raw * factor);
}

/** The largest uncalibrated count whose calibrated value stays within `limit` (the inverse of {@link calibrate}). @internal */
export function uncalibrated(limit: number, factor: number): number {
  if (factor === 1) return limit;
  let raw = Math.floor(limit / factor);
  // Floating-point rounding can put the product a hair above the limit.
  while (raw > 0 && calibrate(raw, factor) > limit) raw--;
  return raw;
}
