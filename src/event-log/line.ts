/**
 * One line of an event log, as the CLI's `--json` prints it.
 * @module
 */
import { terminalSafeJson } from '../util/terminal-safe-json.js';

/** Where a run's event log is, relative to its workspace. */
export const EVENT_LOG_PATH = '.harness/events.jsonl';

/**
 * `value` as one JSON line (ending with `\n`), bidirectional controls written as `\uXXXX`: the line format of the
 * event log and of the CLI's `--json` output. @internal
 */
export function jsonLine(value: object): string {
  return `${terminalSafeJson(JSON.stringify(value))}\n`;
}
