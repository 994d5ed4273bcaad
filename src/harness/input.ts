/**
 * What `harness.run()` accepts, and its validation.
 * @module
 */
import { isRunStore } from '../durability/is-run-store.js';
import type { ResumeOptions, RunStore } from '../durability/types.js';
import { HarnessError } from '../errors.js';

/** What `harness.run()` accepts: the task text, or the task with attachments, a signal, a run id and a store. */
export type RunInput =
  | string
  | {
      task: string;
      /** Paths of local files (absolute or relative to the working directory), copied into `attachments/`. */
      attachments?: readonly string[];
      signal?: AbortSignal;
      runId?: string;
      /** Where this run saves its snapshots, instead of the harness's `store` option (see docs/durability.md). */
      store?: RunStore;
    };

/** A validated {@link RunInput}. @internal */
export interface NormalizedInput {
  task: string;
  attachments: string[];
  signal: AbortSignal | undefined;
  runId: string | undefined;
  store: RunStore | undefined;
}

/** Validates run input; a bad field throws `invalid-input` saying what is expected. @internal */
export function normalizeInput(input: RunInput): NormalizedInput {
  const object = typeof input === 'string' ? { task: input } : input;
  if (typeof object !== 'object' || object === null || typeof object.task !== 'string' || !object.task.trim()) {
    throw new HarnessError(
      'invalid-input',
      'harness.run() needs a non-empty task: a string or { task, attachments?, signal?, runId?, store? }.',
    );
  }
  const given: unknown = 'attachments' in object ? object.attachments : undefined;
  if (given !== undefined && (!Array.isArray(given) || given.some((a) => typeof a !== 'string' || !a))) {
    throw new HarnessError(
      'invalid-input',
      'attachments must be an array of non-empty file paths, e.g. ["./brief.pdf"].',
    );
  }
  const attachments = given === undefined ? [] : [...(given as string[])];
  const signal: unknown = 'signal' in object ? object.signal : undefined;
  if (signal !== undefined && !isAbortSignal(signal)) {
    throw new HarnessError('invalid-input', 'signal must be an AbortSignal (e.g. from new AbortController().signal).');
  }
  const runId = 'runId' in object ? object.runId : undefined;
  if (runId !== undefined && (typeof runId !== 'string' || !runId)) {
    throw new HarnessError('invalid-input', 'runId must be a non-empty string.');
  }
  const store: unknown = 'store' in object ? object.store : undefined;
  if (store !== undefined && !isRunStore(store)) {
    throw new HarnessError('invalid-input', 'store must be a RunStore: an object with save, load, list and delete.');
  }
  return { task: object.task, attachments, signal, runId, store };
}

const RESUME_KEYS = ['workspace', 'signal', 'store'];

/**
 * Validates the options of `harness.resume()`: absent (or `null`) means none, anything else must be an object with
 * only `workspace` (a non-empty directory path), `signal` and `store`. A bad one throws `invalid-input` saying what
 * is expected. @internal
 */
export function normalizeResumeOptions(options: unknown): ResumeOptions {
  if (options === undefined || options === null) return {};
  const usage = 'harness.resume(runId, options?) takes { workspace?: string, signal?: AbortSignal, store?: RunStore }';
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new HarnessError('invalid-input', `${usage}; got ${Array.isArray(options) ? 'an array' : typeof options}.`);
  }
  const unknown = Object.keys(options).filter((key) => !RESUME_KEYS.includes(key));
  if (unknown.length > 0) {
    throw new HarnessError(
      'invalid-input',
      `${usage}; ${unknown.map((key) => `\`${key}\``).join(', ')} is not one of them.`,
    );
  }
  const { workspace, signal, store } = options as Record<string, unknown>;
  if (workspace !== undefined && (typeof workspace !== 'string' || !workspace)) {
    throw new HarnessError(
      'invalid-input',
      `${usage}; workspace must be the run's workspace directory as a non-empty string (got ${typeof workspace}).`,
    );
  }
  if (signal !== undefined && !isAbortSignal(signal)) {
    throw new HarnessError(
      'invalid-input',
      `${usage}; signal must be an AbortSignal (e.g. from new AbortController().signal).`,
    );
  }
  if (store !== undefined && !isRunStore(store)) {
    throw new HarnessError(
      'invalid-input',
      `${usage}; store must be a RunStore: an object with save, load, list and delete.`,
    );
  }
  return options as ResumeOptions;
}

/** Duck-typed, so signals of another realm (a test DOM, a polyfill) are accepted too. */
function isAbortSignal(value: unknown): value is AbortSignal {
  const candidate = value as Partial<AbortSignal> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.aborted === 'boolean' &&
    typeof candidate.addEventListener === 'function' &&
    typeof candidate.removeEventListener === 'function'
  );
}
