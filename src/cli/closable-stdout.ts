/**
 * A stdout whose reader may go away before the run ends (`horizon-harness replay | head -2`).
 * @module
 */
import type { CliOutput } from './io.js';

/** {@link CliOutput} that also tells whether its reader has closed the pipe. */
export interface ClosableOutput extends CliOutput {
  /** True once a write failed with EPIPE: every later write is dropped. */
  readonly closed: boolean;
}

/**
 * Wraps `stream` so that a closed pipe ends the output quietly instead of crashing the process with an unhandled
 * EPIPE: later writes are dropped and `onClosed` runs once (the CLI aborts the run, as nobody reads its output).
 * Any other stream error is rethrown, as it was before.
 */
export function closableStdout(stream: NodeJS.WriteStream, onClosed: () => void): ClosableOutput {
  let closed = false;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    if (closed) return;
    closed = true;
    onClosed();
  });
  return {
    write: (text: string) => (closed ? false : stream.write(text)),
    ...(stream.isTTY ? { isTTY: true } : {}),
    get closed() {
      return closed;
    },
  };
}
