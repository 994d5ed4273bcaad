/**
 * Option schemas shared by the HTTP adapters.
 * @module
 * @internal
 */
import { Agent, type Dispatcher } from 'undici';
import { z } from 'zod';
import { DEFAULTS } from '../defaults.js';
import { HarnessError } from '../errors.js';
import type { RetrySettings } from './http.js';
import { SamplingModeSchema } from './sampling.js';

/** Backoff options; tests set tiny delays here. */
export const RetryOptionsSchema = z
  .object({
    /** First backoff delay. @defaultValue 1000 */
    minTimeoutMs: z.number().int().min(0).default(1_000),
    /** Longest backoff delay. @defaultValue 30000 */
    maxTimeoutMs: z.number().int().min(0).default(30_000),
    /** A server-requested `Retry-After` longer than this fails at once instead of waiting. @defaultValue 120000 */
    maxRetryAfterMs: z.number().int().min(0).default(120_000),
  })
  .prefault({});

const isDispatcher = (value: unknown): value is Dispatcher =>
  typeof value === 'object' && value !== null && typeof (value as { dispatch?: unknown }).dispatch === 'function';

/** Fields every HTTP adapter accepts. @internal */
export const commonFields = {
  model: z.string().min(1),
  contextWindow: z.number().int().positive().default(DEFAULTS.contextWindow),
  headers: z.record(z.string(), z.string()).default({}),
  timeoutMs: z.number().int().positive().default(DEFAULTS.requestTimeoutMs),
  maxRetries: z.number().int().min(0).default(DEFAULTS.maxRetries),
  stream: z.boolean().default(false),
  dispatcher: z.custom<Dispatcher>(isDispatcher, 'must be an undici Dispatcher (Agent, Pool, MockAgent, …)').optional(),
  retry: RetryOptionsSchema,
  /**
   * Whether a request's `temperature` and `topP` are sent: `'auto'` sends them except what the model is known to reject
   * or its server rejected once (then remembered per backend; see docs/backends.md); `'omit'` never sends them.
   * @defaultValue 'auto'
   */
  sampling: SamplingModeSchema,
  /** Reported as `backend.supportsImages`: whether the model accepts image parts. Leave it out when unknown. */
  supportsImages: z.boolean().optional(),
};

/** An http(s) URL, without a trailing slash. @internal */
export const baseUrlSchema = z
  .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
  .transform((url) => url.replace(/\/+$/, ''));

/** Parses adapter options once; a bad option throws 'invalid-options' naming it. @internal */
export function parseOptions<S extends z.ZodType>(adapter: string, schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `\`${issue.path.join('.') || '(options)'}\` ${issue.message}`);
  throw new HarnessError('invalid-options', `Invalid ${adapter}() options: ${problems.join('; ')}.`, { cause: parsed.error });
}

/** The retry settings the HTTP layer reads. @internal */
export function retrySettings(options: { maxRetries: number; retry: z.output<typeof RetryOptionsSchema> }): RetrySettings {
  return { maxRetries: options.maxRetries, ...options.retry };
}

/** The injected dispatcher, or an undici Agent whose own timeouts never fire before ours. @internal */
export function makeDispatcher(injected: Dispatcher | undefined, timeoutMs: number): Dispatcher {
  return injected ?? new Agent({ headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
}
