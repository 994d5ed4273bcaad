/** Share of a head-and-tail cut that goes to the head: the start of an output usually says what it is. */
const HEAD_SHARE = 0.65;

function markerFor(omitted: number, note: string | undefined): string {
  return `\n\n[… ${omitted} characters omitted${note ? `; ${note}` : ''} …]\n\n`;
}

// Never leave half of a surrogate pair at a cut.
function safeEnd(text: string, index: number): number {
  const code = text.charCodeAt(index - 1);
  return index > 0 && code >= 0xd800 && code <= 0xdbff ? index - 1 : index;
}
function safeStart(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return code >= 0xdc00 && code <= 0xdfff ? index + 1 : index;
}

/**
 * Keeps the head and the tail of a text with an explicit marker in between saying how much was cut
 * (and `note`, e.g. where the full text is). The result is at most `maxChars` long whenever `maxChars`
 * exceeds the marker; a text that already fits is returned unchanged.
 */
export function headTail(text: string, maxChars: number, note?: string): string {
  if (text.length <= maxChars) return text;
  // The marker's length depends on the number it prints; two passes settle it.
  let keep = Math.max(0, maxChars - markerFor(text.length, note).length);
  const marker = markerFor(text.length - keep, note);
  keep = Math.max(0, maxChars - marker.length);
  const headEnd = safeEnd(text, Math.ceil(keep * HEAD_SHARE));
  const tailStart = safeStart(text, text.length - (keep - Math.ceil(keep * HEAD_SHARE)));
  return text.slice(0, headEnd) + markerFor(tailStart - headEnd, note) + text.slice(tailStart);
}

/** Property names under which search APIs commonly return their result list. */
const RESULT_KEYS = ['results', 'organic', 'items', 'data', 'works', 'hits', 'entries'];

function entriesOf(text: string): string[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      let list: unknown[] | undefined;
      if (Array.isArray(parsed)) list = parsed;
      else if (parsed && typeof parsed === 'object') {
        const record = parsed as Record<string, unknown>;
        const key = RESULT_KEYS.find((k) => Array.isArray(record[k]));
        if (key) list = record[key] as unknown[];
      }
      if (list) return list.map((entry) => JSON.stringify(entry));
    } catch {
      // Not JSON after all: fall through to the text layout.
    }
  }
  return trimmed.split(/\n[ \t]*\n/).filter((entry) => entry.trim().length > 0);
}

/**
 * Bounds search output to `maxChars` while keeping result entries whole: JSON lists (top level or under
 * `results`/`organic`/…) keep one entry per line, text keeps blank-line-separated blocks; a footer says
 * how many entries were dropped (and `note`). A single entry larger than the bound is cut head-and-tail.
 */
export function searchSnippets(text: string, maxChars: number, note?: string): string {
  if (text.length <= maxChars) return text;
  const entries = entriesOf(text);
  const footerFor = (shown: number) =>
    `\n\n[${shown} of ${entries.length} results shown; the rest were omitted${note ? `; ${note}` : ''}]`;
  const budget = maxChars - footerFor(entries.length).length;
  const kept: string[] = [];
  let used = 0;
  for (const entry of entries) {
    const cost = entry.length + (kept.length > 0 ? 2 : 0);
    if (used + cost > budget) break;
    kept.push(entry);
    used += cost;
  }
  if (kept.length === 0) {
    const first = entries[0] ?? text;
    return headTail(first, Math.max(0, budget), note) + footerFor(entries.length > 0 ? 1 : 0);
  }
  return kept.join('\n\n') + footerFor(kept.length);
}
