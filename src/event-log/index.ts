/** A run's event log (`.harness/events.jsonl`): its path, its option and reading it back. @module */
export { EVENT_LOG_PATH } from './line.js';
export { parseEventLog, readEventLog } from './read.js';
export type { EventLogOption } from './run-event-log.js';
