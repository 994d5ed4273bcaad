/**
 * The viewer's one way to write HTML: a tagged template that escapes every interpolated value unless it is already
 * {@link SafeHtml}, so untrusted text (tool arguments, model answers, file names) can only ever land as text.
 * @module
 */

/** A fragment of HTML that was built by {@link html} (its values escaped) and can be interpolated as it is. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** `text` as HTML text or as a quoted attribute value: `& < > " '` become entities. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ENTITIES[char] ?? char);
}

/** What a template may interpolate: text (escaped), numbers, fragments, lists of them; nothing for null/false. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false || value === true) return '';
  return escapeHtml(String(value));
}

/** Builds HTML from a template, escaping every interpolated value (see {@link HtmlValue}). */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i += 1) out += render(values[i] as HtmlValue) + (strings[i + 1] ?? '');
  return new SafeHtml(out);
}

/**
 * `value` as JSON that is safe inside `<script type="application/json">`: `<`, `>` and `&` are written as `\u003c`…
 * (so no `</script>` or `<!--` can end or bend the element) and so are U+2028/U+2029. `JSON.parse` reads it unchanged.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
