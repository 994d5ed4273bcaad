/**
 * Terminal-safe text.
 * @module
 */

// C0 controls except tab and newline, DEL, and the C1 range: what a terminal may read as a control sequence.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Bidirectional controls: embeddings and overrides (U+202A–U+202E), isolates (U+2066–U+2069) and the marks U+200E,
 * U+200F and U+061C. A terminal that honours them shows text in another order than it is (`exe.txt` as `txt.exe`).
 */
const BIDI = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;

/**
 * `text` with control characters and bidirectional controls shown as `�`: model output, tool arguments and file names
 * are untrusted, and an escape sequence in them must not move the cursor, retitle the window or rewrite what the
 * user already read, nor a bidi override reorder it.
 */
export function printable(text: string): string {
  return text.replace(CONTROL, '\uFFFD').replace(BIDI, '\uFFFD');
}

/**
 * A JSON text with every bidirectional control written as a `\uXXXX` escape: the same JSON value, but nothing a
 * terminal would reorder. (`JSON.stringify` already escapes the C0 controls, ESC and BEL included.)
 */
export function terminalSafeJson(json: string): string {
  return json.replace(BIDI, (char) => `\\u${(char.codePointAt(0) as number).toString(16).padStart(4, '0')}`);
}
