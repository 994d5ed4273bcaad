/**
 * A one-line spinner for waits (a model call, a tool), drawn only on a terminal.
 * @module
 */
import type { CliOutput } from './io.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const CLEAR_LINE = '\r\x1b[2K';

/**
 * Draws `⠋ label` on the current line and redraws it every `intervalMs` while active. The printer calls
 * {@link Spinner.clear} before each line it writes, so the spinner never interleaves with output; on a stream that
 * is not a TTY it does nothing at all (no control characters in logs and pipes).
 */
export class Spinner {
  private label: string | undefined;
  private frame = 0;
  private drawn = false;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly out: CliOutput,
    private readonly intervalMs = 80,
  ) {}

  /** Shows `label` (replacing any earlier one) until {@link Spinner.stop}. */
  start(label: string): void {
    if (!this.out.isTTY) return;
    this.label = label;
    this.draw();
    if (!this.timer) {
      this.timer = setInterval(() => this.draw(), this.intervalMs);
      // A spinner must never keep the process alive on its own.
      this.timer.unref();
    }
  }

  /** Removes the spinner's line; it is drawn again on the next tick while active. */
  clear(): void {
    if (!this.drawn) return;
    this.out.write(CLEAR_LINE);
    this.drawn = false;
  }

  /** Removes the spinner and stops its timer. */
  stop(): void {
    this.clear();
    this.label = undefined;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private draw(): void {
    if (this.label === undefined) return;
    this.out.write(`${CLEAR_LINE}${FRAMES[this.frame % FRAMES.length]} ${this.label}`);
    this.frame += 1;
    this.drawn = true;
  }
}
