/**
 * How a run's progress reaches the user: the human printer or JSON lines.
 * @module
 */
import type { HarnessEvent } from '../events.js';
import type { RunResult } from '../contracts/work.js';

/** Receives a run from start to finish. */
export interface RunReporter {
  /** Before the run: which backend runs it, and where. */
  start(info: { label: string; workspace: string }): void;
  /** Every harness event, in order. */
  event(event: HarnessEvent): void;
  /** A message of the CLI's own (e.g. a command the CLI refused to approve). */
  note(text: string): void;
  /** After the run, with its result. */
  finish(result: RunResult, exitCode: number): void;
  /** Releases the terminal (spinner, an unfinished line); called whatever happened. */
  close(): void;
}
