/**
 * The one rule for run ids. A run id names files and keys (a store's `<runId>.json`, a BullMQ worker's
 * `<workspaceRoot>/<runId>`, a Redis key), so every place that takes one from outside checks it here.
 * @module
 */
import { HarnessError } from '../errors.js';

/**
 * 1 to 128 characters of ASCII letters, digits, `.`, `_` and `-`, starting with a letter or a digit: no `/`, no `..`
 * (nor `.`), no `:` (BullMQ's key separator), nothing a shell or a file system reads specially.
 */
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The rule in words, for error messages and docs. @internal */
export const RUN_ID_RULE =
  '1 to 128 characters of letters, digits, ".", "_" and "-", starting with a letter or a digit (e.g. "report-42")';

/** Whether `value` is a valid run id. @internal */
export function isRunId(value: unknown): value is string {
  return typeof value === 'string' && RUN_ID.test(value);
}

/**
 * Throws `invalid-input` unless `value` is a valid run id; `where` names what was given it (`harness.run()`,
 * `enqueueRun`, …).
 * @internal
 */
export function assertRunId(value: unknown, where: string): asserts value is string {
  if (isRunId(value)) return;
  const shown =
    typeof value === 'string' ? JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value) : typeof value;
  throw new HarnessError('invalid-input', `Invalid run id ${shown} given to ${where}: a run id is ${RUN_ID_RULE}.`);
}
