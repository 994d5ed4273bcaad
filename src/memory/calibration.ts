import type { LlmBackend, Usage } from '../backend/types.js';

/**
 * Calibrated counts stay this much above the ratio the provider reported, so a request counted just under its
 * budget stays under it when the provider's tokenizer is a little less regular than the average suggests.
 */
export const CALIBRATION_MARGIN = 1.05;
/**
 * Calls counted below this many (uncalibrated) tokens teach nothing: fixed costs the provider adds and the per-message
 * overheads assumed here dominate them.
 */
export const MIN_CALIBRATION_TOKENS = 1_000;
/** The factor never leaves the range the `calibration` option allows. */
const FACTOR_RANGE = { min: 0.1, max: 10 } as const;

interface Observed {
  /** Input tokens the provider reported, summed. */
  provider: number;
  /** The same calls' uncalibrated counts, summed. */
  counted: number;
}

/**
 * The factor by which each backend's token counts are multiplied. It starts at the configured `calibration`; once a
 * backend's provider has reported usage for a call of at least {@link MIN_CALIBRATION_TOKENS} tokens, it is the
 * running ratio of reported to counted input tokens over all such calls, times {@link CALIBRATION_MARGIN}. So a model
 * whose tokenizer counts 30 % more than o200k is kept under its window after its first call.
 * @internal
 */
export class UsageCalibration {
  // Per backend object, so two roles on one model share what they learn and a dropped backend is forgotten.
  private readonly observed = new WeakMap<LlmBackend, Observed>();

  constructor(private readonly initial: number) {}

  /** The factor for counts of requests to `backend` (the configured one without a backend or before any usage). */
  factor(backend?: LlmBackend): number {
    const seen = backend && this.observed.get(backend);
    if (!seen) return this.initial;
    const ratio = (seen.provider / seen.counted) * CALIBRATION_MARGIN;
    return Math.min(FACTOR_RANGE.max, Math.max(FACTOR_RANGE.min, ratio));
  }

  /**
   * Learns from one call: `countedInputTokens` is the request as counted (with the factor then in force), `usage` what
   * the provider reported. Calls without usage and tiny ones are ignored.
   */
  observe(backend: LlmBackend, countedInputTokens: number, usage: Usage): void {
    const reported = usage.inputTokens;
    // Undo the factor the count was made with: the current one (or, for calls that overlapped, one update older).
    const counted = countedInputTokens / this.factor(backend);
    if (!(reported > 0) || !(counted >= MIN_CALIBRATION_TOKENS)) return;
    const seen = this.observed.get(backend);
    if (seen) {
      seen.provider += reported;
      seen.counted += counted;
    } else {
      this.observed.set(backend, { provider: reported, counted });
    }
  }
}
