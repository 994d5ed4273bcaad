/**
 * JSON text that a terminal shows as it is.
 * @module
 */

/**
 * Bidirectional controls: embeddings and overrides (U+202A–U+202E), isolates (U+2066–U+2069) and the marks U+200E,
 * U+200F and U+061C. A terminal that honours them shows text in another order than it is (`exe.txt` as `txt.exe`).
 * @internal
 */
export const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;

/**
 * A JSON text with every bidirectional control written as a `\uXXXX` escape: the same JSON value, but nothing a
 * terminal would reorder. (`JSON.stringify` already escapes the C0 controls, ESC and BEL included.) The CLI's
 * `--json` lines and the event log's lines are written this way. @internal
 */
export function terminalSafeJson(json: string): string {
  return json.replace(BIDI_CONTROLS, (char) => `\\u${(char.codePointAt(0) as number).toString(16).padStart(4, '0')}`);
}
