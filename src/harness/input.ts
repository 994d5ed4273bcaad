/**
 * What `harness.run()` accepts, and its validation.
 * @module
 */
import type { RunResult } from '../contracts/work.js';
import { isRunStore } from '../durability/is-run-store.js';
import type { ResumeOptions, RunStore } from '../durability/types.js';
import { HarnessError } from '../errors.js';
import { isStandardSchema, toJsonSchema, type JsonSchema, type OutputRequest } from '../schema/schema-adapter.js';
import type { StandardSchemaV1 } from '../schema/standard-schema.js';

/**
 * What `harness.run()` accepts: the task text, or the task with attachments, a signal, a run id, a store, the app's
 * run context, a schema of the typed result and the run to continue from.
 */
export type RunInput<Context = unknown, Output extends StandardSchemaV1 | undefined = StandardSchemaV1 | undefined> =
  | string
  | RunRequest<Context, Output>;

/** The object form of {@link RunInput}. */
export interface RunRequest<Context = unknown, Output extends StandardSchemaV1 | undefined = undefined> {
  task: string;
  /** Paths of local files (absolute or relative to the working directory), copied into `attachments/`. */
  attachments?: readonly string[];
  signal?: AbortSignal;
  runId?: string;
  /** Where this run saves its snapshots, instead of the harness's `store` option (see docs/durability.md). */
  store?: RunStore;
  /**
   * The app's own per-run value (a user id, a database handle, a logger…), handed to every tool call as
   * `ToolContext.context`. Never sent to a model, never put in events or snapshots: a resumed run gets it again from
   * `harness.resume(runId, { context })`. See docs/apps.md.
   */
  context?: Context;
  /**
   * A schema (any Standard Schema library) of a typed result: the run's answer is also returned as a value validated
   * against it, as `result.output`. See docs/apps.md.
   */
  output?: Output;
  /** The JSON Schema of `output`, for a schema the harness cannot convert itself (as a tool's `jsonSchema`). */
  outputJsonSchema?: JsonSchema;
  /**
   * A finished run of this harness (its result, or its run id) whose deliverable, verdict and files are this run's
   * starting state: a follow-up request on the same work, in the same workspace. See docs/apps.md.
   */
  continueFrom?: RunResult | string;
}

/** A validated {@link RunInput}. @internal */
export interface NormalizedInput {
  task: string;
  attachments: string[];
  signal: AbortSignal | undefined;
  runId: string | undefined;
  store: RunStore | undefined;
  context: unknown;
  output: OutputRequest | undefined;
  /** The run to continue from: its id, and its result when that was given. */
  continueFrom: { runId: string; result?: RunResult } | undefined;
}

/** Validates run input; a bad field throws `invalid-input` saying what is expected. @internal */
export function normalizeInput(input: RunInput<unknown, StandardSchemaV1 | undefined>): NormalizedInput {
  const object = typeof input === 'string' ? { task: input } : input;
  if (typeof object !== 'object' || object === null || typeof object.task !== 'string' || !object.task.trim()) {
    throw new HarnessError(
      'invalid-input',
      'harness.run() needs a non-empty task: a string or { task, attachments?, signal?, runId?, store?, context?, output?, continueFrom? }.',
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
  const output =
    'output' in object ? outputRequest(object.output, object.outputJsonSchema, 'harness.run()') : undefined;
  const continueFrom = 'continueFrom' in object ? continuedRun(object.continueFrom) : undefined;
  const context = 'context' in object ? object.context : undefined;
  return { task: object.task, attachments, signal, runId, store, context, output, continueFrom };
}

/** Checks a typed-result schema and converts it to JSON Schema, now: a schema that cannot be shown fails here. */
function outputRequest(schema: unknown, explicit: unknown, where: string): OutputRequest | undefined {
  if (schema === undefined) return undefined;
  if (!isStandardSchema(schema)) {
    throw new HarnessError(
      'invalid-input',
      `${where}: output must be a schema of a Standard Schema library (zod 4, zod 3.24+, Valibot, ArkType…).`,
    );
  }
  if (explicit !== undefined && (typeof explicit !== 'object' || explicit === null || Array.isArray(explicit))) {
    throw new HarnessError('invalid-input', `${where}: outputJsonSchema must be a JSON Schema object.`);
  }
  const converted = toJsonSchema(schema, 'output', explicit as JsonSchema | undefined, 'outputJsonSchema');
  if (!converted.ok) throw new HarnessError('invalid-input', `${where}: output: ${converted.reason}.`);
  return { schema, jsonSchema: converted.schema };
}

function continuedRun(value: unknown): NormalizedInput['continueFrom'] {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && value) return { runId: value };
  const result = value as Partial<RunResult> | null;
  if (
    typeof value === 'object' &&
    typeof result?.runId === 'string' &&
    result.runId &&
    typeof result.status === 'string' &&
    typeof result.workspace === 'string' &&
    typeof result.deliverable?.answer === 'string' &&
    Array.isArray(result.verdicts)
  ) {
    return { runId: result.runId, result: result as RunResult };
  }
  throw new HarnessError(
    'invalid-input',
    'continueFrom must be the result of an earlier run of this harness, or its run id (a non-empty string).',
  );
}

/** What `harness.resume()` accepts: where the run is, plus what a snapshot never holds (the app's context, the schema). */
export interface HarnessResumeOptions<Context = unknown, Output extends StandardSchemaV1 | undefined = undefined>
  extends ResumeOptions {
  /** The app's run context again (it is never saved): handed to the resumed run's tool calls. */
  context?: Context;
  /** The typed-result schema again, when the run was started with `output` (schemas are not saved). */
  output?: Output;
  /** The JSON Schema of `output`, for a schema the harness cannot convert itself. */
  outputJsonSchema?: JsonSchema;
}

/** Validated resume options. @internal */
export interface NormalizedResumeOptions extends ResumeOptions {
  context: unknown;
  output: OutputRequest | undefined;
}

const RESUME_KEYS = ['workspace', 'signal', 'store', 'context', 'output', 'outputJsonSchema'];

/**
 * Validates the options of `harness.resume()`: absent (or `null`) means none, anything else must be an object with
 * only `workspace` (a non-empty directory path), `signal`, `store`, `context`, `output` and `outputJsonSchema`. A bad
 * one throws `invalid-input` saying what is expected. @internal
 */
export function normalizeResumeOptions(options: unknown): NormalizedResumeOptions {
  if (options === undefined || options === null) return { context: undefined, output: undefined };
  const usage =
    'harness.resume(runId, options?) takes { workspace?: string, signal?: AbortSignal, store?: RunStore, context?, output? }';
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
  const { workspace, signal, store, context, output, outputJsonSchema } = options as Record<string, unknown>;
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
  return {
    ...(options as ResumeOptions),
    context,
    output: outputRequest(output, outputJsonSchema, 'harness.resume()'),
  };
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
