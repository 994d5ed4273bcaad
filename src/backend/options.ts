/**
 * Option schemas shared by the HTTP adapters.
 * @module
 * @internal
 */
import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { DEFAULTS } from '../defaults.js';
import { HarnessError } from '../errors.js';
import { describeIssues } from '../util/did-you-mean.js';
import type { RetrySettings } from './retry.js';
import { BackendPricingSchema } from './pricing.js';
import { SamplingModeSchema } from './sampling.js';

/**
 * How failed requests are retried (see docs/backends.md, "Errors and retries"). `maxRetries` bounds the retries
 * of all kinds together; `maxRetries: 0` turns them all off.
 */
export const RetryOptionsSchema = z
  .strictObject({
    /** First backoff delay of a 429 / 5xx / overload / broken connection / garbled 200; it doubles per retry. @defaultValue 1000 */
    minTimeoutMs: z.number().int().min(0).default(1_000),
    /** Longest single backoff delay (before jitter takes up to half off). @defaultValue 8000 */
    maxTimeoutMs: z.number().int().min(0).default(8_000),
    /** A server-requested `Retry-After` longer than this fails at once instead of waiting. @defaultValue 60000 */
    maxRetryAfterMs: z.number().int().min(0).default(60_000),
    /** All the waiting one call may do, `Retry-After` included; a retry that would go past it is not made. @defaultValue 90000 */
    maxTotalDelayMs: z.number().int().min(0).default(90_000),
    /** Quick retries when nothing answers at the address (connection refused, unknown host, no route, TLS failure). @defaultValue 2 */
    connectRetries: z.number().int().min(0).default(2),
    /** First delay of those quick retries; it doubles per retry. @defaultValue 250 */
    connectDelayMs: z.number().int().min(0).default(250),
    /** Retries after a first-byte, idle or total timeout (each attempt can take that long again). @defaultValue 1 */
    timeoutRetries: z.number().int().min(0).default(1),
  })
  .prefault({});

/** Until the response headers arrive; undici's own default. */
const FIRST_BYTE_TIMEOUT_MS = 300_000;
/** The longest silence inside a response body; undici's own default, and above the pauses of hidden reasoning. */
const IDLE_TIMEOUT_MS = 300_000;

const isDispatcher = (value: unknown): value is Dispatcher =>
  typeof value === 'object' && value !== null && typeof (value as { dispatch?: unknown }).dispatch === 'function';

/** Fields every HTTP adapter accepts. @internal */
export const commonFields = {
  model: z.string().min(1),
  contextWindow: z.number().int().positive().default(DEFAULTS.contextWindow),
  headers: z.record(z.string(), z.string()).default({}),
  /** The whole request, body included. @defaultValue `DEFAULTS.requestTimeoutMs` (600 000) */
  timeoutMs: z.number().int().positive().default(DEFAULTS.requestTimeoutMs),
  /**
   * Until the response headers arrive; a non-streamed answer's headers come with the whole answer. `0` turns it off.
   * @defaultValue 300000
   */
  firstByteTimeoutMs: z.number().int().min(0).default(FIRST_BYTE_TIMEOUT_MS),
  /** The longest silence while a response body arrives (between stream chunks, and before the first). `0` turns it off. @defaultValue 300000 */
  idleTimeoutMs: z.number().int().min(0).default(IDLE_TIMEOUT_MS),
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
  /**
   * Reported as `backend.pricing`: `{ currency, inputPerMTok, outputPerMTok, cachedInputPerMTok?, cacheWritePerMTok? }`,
   * the model's prices per million tokens, for the run report's cost and `limits.maxCost` (see docs/backends.md, "Pricing and cost").
   */
  pricing: BackendPricingSchema.optional(),
};

/** An http(s) URL, without a trailing slash. @internal */
export const baseUrlSchema = z
  .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
  .transform((url) => url.replace(/\/+$/, ''));

/** Parses adapter options once; a bad option throws 'invalid-options' naming it. @internal */
export function parseOptions<S extends z.ZodType>(adapter: string, schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems = describeIssues(parsed.error.issues, { schema });
  throw new HarnessError('invalid-options', `Invalid ${adapter}() options: ${problems.join('; ')}.`, {
    cause: parsed.error,
  });
}

/** The retry settings the HTTP layer reads. @internal */
export function retrySettings(options: {
  maxRetries: number;
  retry: z.output<typeof RetryOptionsSchema>;
}): RetrySettings {
  return { maxRetries: options.maxRetries, ...options.retry };
}
