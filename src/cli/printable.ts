/**
 * Terminal-safe text.
 * @module
 */
import { BIDI_CONTROLS } from '../util/terminal-safe-json.js';

// C0 controls except tab and newline, DEL, and the C1 range: what a terminal may read as a control sequence.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * `text` with control characters and bidirectional controls shown as `�`: model output, tool arguments and file names
 * are untrusted, and an escape sequence in them must not move the cursor, retitle the window or rewrite what the
 * user already read, nor a bidi override reorder it.
 */
export function printable(text: string): string {
  return text.replace(CONTROL, '\uFFFD').replace(BIDI_CONTROLS, '\uFFFD');
}
