import type { LlmBackend } from '../backend/types.js';
import { DEFAULTS } from '../defaults.js';
import { reservedOutputTokens } from '../llm/call-model.js';

/** The token limits of one request. @internal */
export interface RequestLimits {
  /** The backend's context window. */
  window: number;
  /** Output tokens reserved for the answer. */
  reserved: number;
  /** No request leaves above this: min(`emergencyAt` × window, window − reserved). */
  limit: number;
  /** Above this the dialogue is compressed: min(`compressAt` × window, `limit`). */
  compressAt: number;
}

/** A backend's context window, or the default window when it declares no usable one. @internal */
export function windowOf(backend: LlmBackend): number {
  const window = backend.contextWindow;
  return Number.isFinite(window) && window > 0 ? window : DEFAULTS.contextWindow;
}

/**
 * The limits of a request to `backend` that reserves `maxOutputTokens` for its answer (absent or invalid:
 * `reservedOutputTokens(window)`): the input may use the window less the reserve, and never more than the thresholds.
 * @internal
 */
export function requestLimits(
  backend: LlmBackend,
  maxOutputTokens: number | undefined,
  thresholds: { compressAt: number; emergencyAt: number },
): RequestLimits {
  const window = windowOf(backend);
  const reserved =
    maxOutputTokens !== undefined && Number.isFinite(maxOutputTokens) && maxOutputTokens >= 0
      ? maxOutputTokens
      : reservedOutputTokens(window);
  const limit = Math.min(Math.floor(thresholds.emergencyAt * window), window - reserved);
  return { window, reserved, limit, compressAt: Math.min(Math.floor(thresholds.compressAt * window), limit) };
}
