/**
 * Options of `aiSdkBackend()`.
 * @module
 */
import { z } from 'zod';
import { BackendPricingSchema } from '../backend/pricing.js';
import { RetryOptionsSchema } from '../backend/options.js';
import { DEFAULTS } from '../defaults.js';

/** Options of {@link aiSdkBackend}. */
export const AiSdkBackendOptionsSchema = z.strictObject({
  /**
   * The model's context window in tokens. Required: AI SDK models do not declare it, and the harness sizes every
   * request (memory, pruning, output reserve) by it.
   */
  contextWindow: z.number().int().positive(),
  /** Reported as `backend.provider`. @defaultValue the model's own `provider` (e.g. `openai.chat`) */
  provider: z.string().min(1).optional(),
  /**
   * Whether the harness calls the model through `doStream` (and so emits `text-delta`, `reasoning-delta` and
   * `tool-call-delta` events); `false` keeps it on `doGenerate`.
   * @defaultValue false
   */
  stream: z.boolean().default(false),
  /** Reported as `backend.supportsImages`: whether the model accepts image parts. Leave it out when unknown. */
  supportsImages: z.boolean().optional(),
  /**
   * Reported as `backend.pricing`: `{ currency, inputPerMTok, outputPerMTok, cachedInputPerMTok? }`, the model's prices
   * per million tokens, for the run report's cost and `limits.maxCost` (see docs/backends.md, "Pricing and cost").
   */
  pricing: BackendPricingSchema.optional(),
  /**
   * Retries of a failed call (429, 5xx, a broken connection), waiting as `retry` says; `0` turns them off. The AI SDK
   * retries in `generateText`, not in the model, so without them a call the provider refuses once fails.
   * @defaultValue `DEFAULTS.maxRetries`
   */
  maxRetries: z.number().int().min(0).default(DEFAULTS.maxRetries),
  /** How failed calls are retried (see docs/backends.md, "Errors and retries"). */
  retry: RetryOptionsSchema,
  /** Passed as `providerOptions` on every call (e.g. `{ openai: { reasoningEffort: 'low' } }`). */
  providerOptions: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
  /** Extra HTTP headers sent with every call, as the AI SDK's `headers` call option. */
  headers: z.record(z.string(), z.string()).optional(),
});

/** What users pass to {@link aiSdkBackend}. */
export type AiSdkBackendOptions = z.input<typeof AiSdkBackendOptionsSchema>;
