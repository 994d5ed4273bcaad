/**
 * Reading a run's event log (`.harness/events.jsonl`) back into events.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { HarnessError } from '../errors.js';
import { HARNESS_EVENT_TYPES, type HarnessEvent } from '../events.js';

const KNOWN_TYPES: ReadonlySet<string> = new Set(HARNESS_EVENT_TYPES);

/**
 * The events of an event log's text, in file order: one JSON object a line, as the CLI's `--json` prints them (a
 * saved `--json` output reads the same; its closing `result` line is not an event and is left out).
 *
 * A line that is not a whole JSON event is skipped rather than failing the read: a process that crashed mid-append
 * leaves its last line torn, and a resumed run goes on after it on a new line. Lines of an event type this version
 * does not know (a newer library wrote them) are skipped too, so every returned value is a {@link HarnessEvent}.
 */
export function parseEventLog(text: string): HarnessEvent[] {
  const events: HarnessEvent[] = [];
  for (const line of text.split('\n')) {
    const event = parseEventLine(line);
    if (event) events.push(event);
  }
  return events;
}

/**
 * Reads the event log at `path` (usually `<workspace>/.harness/events.jsonl`) into its events; see
 * {@link parseEventLog} for which lines are kept. Rejects with `invalid-input` when the file cannot be read.
 * @example
 * ```ts
 * const events = await readEventLog('work/.harness/events.jsonl');
 * const finish = events.findLast((e) => e.type === 'run-finish');
 * ```
 */
export async function readEventLog(path: string): Promise<HarnessEvent[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'it does not exist' : String(error);
    throw new HarnessError(
      'invalid-input',
      `Cannot read the event log "${path}": ${reason}. Pass a run's .harness/events.jsonl (a run with a local workspace writes one unless eventLog is false).`,
      { cause: error },
    );
  }
  return parseEventLog(text);
}

/** The event on one line, or undefined for a blank, torn or foreign line. */
function parseEventLine(line: string): HarnessEvent | undefined {
  if (line.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { type, runId } = value as { type?: unknown; runId?: unknown };
  if (typeof type !== 'string' || !KNOWN_TYPES.has(type) || typeof runId !== 'string') return undefined;
  return value as HarnessEvent;
}
