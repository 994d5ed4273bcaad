/**
 * `--json`: the run as JSON lines for scripts.
 * @module
 */
import type { HarnessEvent } from '../events.js';
import type { RunResult } from '../contracts/work.js';
import type { CliOutput } from './io.js';
import { jsonLine } from '../event-log/line.js';
import { printable } from './printable.js';
import type { RunReporter } from './reporter.js';

/** The last line of `--json` output. */
export interface JsonResultLine {
  type: 'result';
  exitCode: number;
  result: RunResult;
}

/**
 * Writes each harness event as one JSON line on stdout, then one {@link JsonResultLine}; nothing else goes to
 * stdout. The CLI's own notes go to stderr. Bidirectional controls are written as `\uXXXX` escapes (the same JSON).
 */
export class JsonLinesReporter implements RunReporter {
  constructor(
    private readonly stdout: CliOutput,
    private readonly stderr: CliOutput,
  ) {}

  start(): void {}

  event(event: HarnessEvent): void {
    this.stdout.write(jsonLine(event));
  }

  note(text: string): void {
    this.stderr.write(`${printable(text)}\n`);
  }

  finish(result: RunResult, exitCode: number): void {
    const line: JsonResultLine = { type: 'result', exitCode, result };
    this.stdout.write(jsonLine(line));
  }

  close(): void {}
}
