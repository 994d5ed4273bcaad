/**
 * Counting a text in calls of bounded size, so that a hostile text cannot make one tokenizer call quadratic.
 *
 * gpt-tokenizer splits a text into words with its encoding's split pattern, then merges each word's bytes pair by
 * pair, scanning the whole word for every merge: a word of n bytes costs about n² steps, and a long run of one
 * character (or of spaces, newlines, emoji) is one word. A 150 KB page of one letter blocked the event loop 12 s.
 *
 * The text is therefore cut where every gpt-tokenizer split pattern (r50k/p50k, cl100k, o200k) always ends one word
 * and starts the next, and never anywhere else, so the parts' counts add up to the whole text's count exactly:
 * - before a space or other whitespace that is not a line break, after a character that is not whitespace (no word
 *   holds a visible character followed by such whitespace);
 * - after a single line break between two visible characters, the second not `/` (o200k lets a punctuation word
 *   end in line breaks and slashes; r50k splits a run of whitespace before a visible character differently at the
 *   end of a text, hence a single line break only);
 * - between a letter and a following punctuation mark or symbol that is not `'` (contractions) or a combining mark;
 * - between a letter and a digit, either way.
 * Each call receives at most {@link MAX_COUNTED_CHARS} characters made of whole parts. A stretch with no cut for
 * longer than that (one letter repeated, a run of spaces, emoji or digits, an unbroken line of Thai) is not given to
 * the tokenizer at all: it is counted by its UTF-8 bytes, which byte-level BPE never exceeds (every token stands for
 * at least one byte), so such a count errs only upwards and says it is not exact.
 * @module
 */

/** Characters one tokenizer call receives at most: a word's merge cost grows with its square, so this bounds it. */
export const MAX_COUNTED_CHARS = 256;

// The cuts described above, as zero-width matches; lookbehinds see whole code points under the `u` flag. Each
// alternative looks ahead first: inside a long run that test fails at once (a scan costs a quarter to a half less).
const CUT_PATTERN = String.raw`(?=[^\S\r\n])(?<=\S)|(?=[^\s/])(?<=\S[\r\n])|(?=[^\s\p{L}\p{N}\p{M}'])(?<=\p{L})|(?=\p{N})(?<=\p{L})|(?=\p{L})(?<=\p{N})`;
const CUT_AT = new RegExp(CUT_PATTERN, 'uy');
const NEXT_CUT = new RegExp(CUT_PATTERN, 'gu');

/** A text's token count, or (`exact: false`) an upper bound on it. */
export interface TextCount {
  tokens: number;
  exact: boolean;
  /**
   * True when the figure is a bound only because the tokenizer's tables are still loading: the same text will be
   * counted exactly once they are, so the figure must not be kept in place of the count.
   */
  loading?: boolean;
}

/**
 * Counts `text` with `countPart`, never passing it more than `maxChars` characters; see the module comment for why
 * the sum is the whole text's count and when it is a UTF-8 byte bound instead. `countPart` must be a byte-level BPE
 * using one of gpt-tokenizer's split patterns. @internal
 */
export function countInBoundedParts(
  text: string,
  countPart: (part: string) => number,
  maxChars = MAX_COUNTED_CHARS,
): TextCount {
  if (text.length <= maxChars) return { tokens: text.length === 0 ? 0 : countPart(text), exact: true };
  let tokens = 0;
  let exact = true;
  let start = 0;
  while (start < text.length) {
    if (text.length - start <= maxChars) {
      tokens += countPart(text.slice(start));
      break;
    }
    const cut = lastCutWithin(text, start, start + maxChars);
    if (cut !== undefined) {
      tokens += countPart(text.slice(start, cut));
      start = cut;
      continue;
    }
    // No cut within reach: one stretch longer than any call may take, up to the next cut.
    const end = nextCutAfter(text, start + maxChars);
    tokens += Buffer.byteLength(text.slice(start, end), 'utf8');
    exact = false;
    start = end;
  }
  return { tokens, exact };
}

/**
 * What {@link countInBoundedParts} would hand `countPart` (`parts`, in order), and the UTF-8 bytes of the stretches it
 * would bound instead (`uncountedBytes`; `exact` is false when there are any): for counting the parts elsewhere, in
 * one batch. @internal
 */
export function splitForCounting(
  text: string,
  maxChars = MAX_COUNTED_CHARS,
): { parts: string[]; uncountedBytes: number; exact: boolean } {
  const parts: string[] = [];
  // Each part is recorded and counted as 0 here, so the sum is what the stretches left uncounted add.
  const collect = (part: string): number => {
    parts.push(part);
    return 0;
  };
  const { tokens, exact } = countInBoundedParts(text, collect, maxChars);
  return { parts, uncountedBytes: tokens, exact };
}

/** The last cut in (start, end], or undefined; looks back at most `end - start` characters. */
function lastCutWithin(text: string, start: number, end: number): number | undefined {
  for (let i = end; i > start; i--) {
    if (insidePair(text, i)) continue;
    CUT_AT.lastIndex = i;
    if (CUT_AT.test(text)) return i;
  }
  return undefined;
}

/** The first cut at or after `from`, or the text's end. */
function nextCutAfter(text: string, from: number): number {
  NEXT_CUT.lastIndex = insidePair(text, from) ? from + 1 : from;
  const match = NEXT_CUT.exec(text);
  return match ? match.index : text.length;
}

/** True when `i` falls between the two halves of a surrogate pair. */
function insidePair(text: string, i: number): boolean {
  const before = text.charCodeAt(i - 1);
  const after = text.charCodeAt(i);
  return before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff;
}
