/**
 * Lenient extraction of a JSON value from a model reply.
 * @module
 */

/**
 * Finds the JSON value in a model reply: the whole text, a fenced code block, or the first
 * balanced object/array after leading prose. Returns `undefined` when no candidate parses.
 */
export function extractJson(text: string): unknown {
  return parsedJsonCandidates(text).next().value;
}

/**
 * Every JSON value a reply holds, in the order {@link extractJson} tries them: the whole text, fenced code blocks,
 * then each balanced object/array. Callers with a schema take the first that validates, so prose quoting `[1]`
 * before the real object costs nothing.
 */
export function* parsedJsonCandidates(text: string): Generator<unknown, undefined> {
  for (const candidate of jsonCandidates(text)) {
    try {
      yield JSON.parse(candidate);
    } catch {
      // Try the next candidate; models often wrap JSON in prose or fences.
    }
  }
  return undefined;
}

function* jsonCandidates(text: string): Generator<string> {
  const trimmed = text.trim();
  if (trimmed) yield trimmed;
  for (const match of trimmed.matchAll(/```[a-zA-Z0-9_-]*\s*\n?([\s\S]*?)```/g)) {
    const body = match[1]?.trim();
    if (body) yield body;
  }
  for (let start = 0; start < trimmed.length; start++) {
    const ch = trimmed[start];
    if (ch !== '{' && ch !== '[') continue;
    const end = balancedEnd(trimmed, start);
    if (end !== -1) yield trimmed.slice(start, end + 1);
  }
}

/** Index of the bracket closing the one at `start`, honouring strings; -1 when unbalanced. */
function balancedEnd(text: string, start: number): number {
  const stack: string[] = [];
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{') stack.push('}');
    else if (ch === '[') stack.push(']');
    else if (ch === '}' || ch === ']') {
      if (stack.pop() !== ch) return -1;
      if (stack.length === 0) return i;
    }
  }
  return -1;
}
