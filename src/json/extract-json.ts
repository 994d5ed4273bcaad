/**
 * Lenient extraction of a JSON value from a model reply, in time linear in the reply's length.
 * @module
 */
import { DEFAULTS } from '../defaults.js';

/**
 * Finds the JSON value in a model reply: the whole text, a fenced code block, or a balanced object/array after
 * leading prose. Returns `undefined` when no candidate parses, or when the reply is longer than
 * `DEFAULTS.maxJsonReplyChars` (it is not read then).
 */
export function extractJson(text: string): unknown {
  if (text.length > DEFAULTS.maxJsonReplyChars) return undefined;
  for (const candidate of jsonCandidates(text)) {
    const value = parseOrUndefined(candidate);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** An object's first token after `{`: a key's opening quote, or the closing brace of `{}`. */
const OBJECT_START = /^\{\s*["}]/;
/** An array's first token after `[`: the start of a value, or the closing bracket of `[]`. */
const ARRAY_START = /^\[\s*[-\d"{[\]tfn]/;

/**
 * `JSON.parse(text)`, or `undefined` when it is not JSON. Prose in brackets (`{name}`, `[see below]`) is turned
 * away before parsing: a failed parse throws, and thousands of throws cost more than the scan that found them.
 */
export function parseOrUndefined(text: string): unknown {
  if (text.startsWith('{') ? !OBJECT_START.test(text) : text.startsWith('[') && !ARRAY_START.test(text))
    return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The texts in a reply that may be its JSON value, in the order they are tried: the whole text, the body of each
 * fenced code block, then each outermost balanced object/array (one nested in another is part of the outer one, not
 * a candidate of its own). Their total length is at most three times the reply's, and finding them reads each
 * character a bounded number of times, so even a hostile reply costs time linear in its length.
 */
export function jsonCandidates(text: string): string[] {
  const trimmed = text.trim();
  if (!trimmed) return [];
  return [
    trimmed,
    ...fencedBodies(trimmed),
    ...balancedSpans(trimmed).map(([start, end]) => trimmed.slice(start, end)),
  ];
}

const FENCE = '```';
const INFO_CHAR = /[A-Za-z0-9_-]/;

/** The bodies of fenced code blocks: text between a fence (and its info string) and the next fence. */
function fencedBodies(text: string): string[] {
  const bodies: string[] = [];
  let open = text.indexOf(FENCE);
  while (open !== -1) {
    let start = open + FENCE.length;
    while (start < text.length && INFO_CHAR.test(text[start] as string)) start++;
    const close = text.indexOf(FENCE, start);
    if (close === -1) break;
    const body = text.slice(start, close).trim();
    if (body) bodies.push(body);
    open = text.indexOf(FENCE, close + FENCE.length);
  }
  return bodies;
}

/** Characters read per character of the text before a scan stops going back to retry an abandoned start. */
const RESCAN_FACTOR = 4;

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LINE_FEED = 0x0a;

/**
 * Outermost balanced `{…}`/`[…]` spans as `[start, end)` pairs, honouring JSON strings inside them. One pass keeps a
 * stack of open brackets; a closing bracket that does not match, or a line break inside a string (which JSON never
 * has), abandons the spans still open. The scan then goes back to just after the outermost abandoned opener, since
 * prose (`it's "a {`) can open a bracket or a string that is no JSON, while the budget lasts: at most
 * {@link RESCAN_FACTOR} reads per character, so a hostile text cannot make the scan quadratic.
 */
function balancedSpans(text: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  // Where each open bracket is; the bracket itself says what closes it.
  const open = new Int32Array(text.length);
  let depth = 0;
  let inString = false;
  let budget = RESCAN_FACTOR * text.length;
  const abandon = (at: number): number => {
    const outermost = open[0] as number;
    depth = 0;
    inString = false;
    if (budget <= 0) return at;
    // Spans found inside the abandoned opener are found again by the rescan.
    while (spans.length && (spans.at(-1) as [number, number])[0] > outermost) spans.pop();
    return outermost;
  };
  for (let i = 0; i < text.length; i++, budget--) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === BACKSLASH) i++;
      else if (code === QUOTE) inString = false;
      else if (code === LINE_FEED) i = abandon(i);
      continue;
    }
    if (code === OPEN_BRACE || code === OPEN_BRACKET) open[depth++] = i;
    else if (depth === 0) {
      // Outside any bracket, quotes and closing brackets are prose.
    } else if (code === QUOTE) inString = true;
    else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      const start = open[depth - 1] as number;
      if ((text.charCodeAt(start) === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET) !== code) {
        i = abandon(i);
        continue;
      }
      depth--;
      // A closed span contains every span recorded since it opened: those are nested in it, no longer outermost.
      while (spans.length && (spans.at(-1) as [number, number])[0] > start) spans.pop();
      spans.push([start, i + 1]);
    }
  }
  return spans;
}
