import type { LlmBackend, Usage } from '../backend/types.js';
import type { UsageReport } from './types.js';

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
/**
 * The lowest factor a provider's reports can set (unless the `calibration` option starts lower: a factor you configure
 * is yours to choose). 0.9 because the default encoding, o200k, has one of the largest vocabularies of current
 * tokenizers, so few models count the same text in clearly fewer tokens, while a provider reporting fewer tokens than
 * counted here may be reporting less than it processed (only the prompt tokens not served from a cache, say). A model
 * whose tokenizer really is more compact than 0.9 × o200k is counted high by the difference, so its requests are
 * compressed a little early; an under-reporting provider can make the harness undercount by at most 1 / 0.9, about
 * 11 %, where the old floor of 0.1 allowed tenfold.
 */
export const CALIBRATION_FLOOR = 0.9;
/** The highest factor, as for the `calibration` option. */
export const CALIBRATION_CEILING = 10;
/**
 * A report below this share of the local count is ignored (and reported once per backend): a figure that far below
 * the count is more likely a partial report (cached prompt tokens left out) than a tokenizer that much more compact
 * than the local one, and learning from it would undercount every later request.
 */
export const MIN_REPORTED_SHARE = 0.5;

interface Observed {
  /** Input tokens the provider reported, summed. */
  provider: number;
  /** The same calls' uncalibrated counts, summed. */
  counted: number;
}

/**
 * The factor by which each backend's token counts are multiplied. It starts at the configured `calibration`; once a
 * backend's provider has reported usage for a call of at least {@link MIN_CALIBRATION_TOKENS} tokens, it is the
 * running ratio of reported to counted input tokens over all such calls, times {@link CALIBRATION_MARGIN}, kept
 * between {@link CALIBRATION_FLOOR} (or the configured factor, when lower) and {@link CALIBRATION_CEILING}. So a model
 * whose tokenizer counts 30 % more than o200k is kept under its window after its first call, and a provider that
 * under-reports cannot shrink the counts much. A report below {@link MIN_REPORTED_SHARE} of the local count teaches
 * nothing; the first of a backend is reported as a `run-warning` (`usage-under-reported`).
 * @internal
 */
export class UsageCalibration {
  // Per backend object, so two roles on one model share what they learn and a dropped backend is forgotten.
  private readonly observed = new WeakMap<LlmBackend, Observed>();
  // Backends whose ignored report has been warned about.
  private readonly warned = new WeakSet<LlmBackend>();
  private readonly floor: number;

  constructor(private readonly initial: number) {
    this.floor = Math.min(CALIBRATION_FLOOR, initial);
  }

  /** The factor for counts of requests to `backend` (the configured one without a backend or before any usage). */
  factor(backend?: LlmBackend): number {
    const seen = backend && this.observed.get(backend);
    if (!seen) return this.initial;
    const ratio = (seen.provider / seen.counted) * CALIBRATION_MARGIN;
    return Math.min(CALIBRATION_CEILING, Math.max(this.floor, ratio));
  }

  /**
   * Learns from one call: `countedInputTokens` is the request as counted (with the factor then in force), `usage` what
   * the provider reported. Calls without usage and tiny ones are ignored; so is a report under half the local count,
   * and the first such report of a backend is emitted through `report` as a `run-warning`.
   */
  observe(backend: LlmBackend, countedInputTokens: number, usage: Usage, report?: UsageReport): void {
    const reported = usage.inputTokens;
    // Undo the factor the count was made with: the current one (or, for calls that overlapped, one update older).
    const counted = countedInputTokens / this.factor(backend);
    if (!(reported > 0) || !(counted >= MIN_CALIBRATION_TOKENS)) return;
    if (reported < MIN_REPORTED_SHARE * counted) {
      this.warnOnce(backend, reported, counted, report);
      return;
    }
    const seen = this.observed.get(backend);
    if (seen) {
      seen.provider += reported;
      seen.counted += counted;
    } else {
      this.observed.set(backend, { provider: reported, counted });
    }
  }

  private warnOnce(backend: LlmBackend, reported: number, counted: number, report: UsageReport | undefined): void {
    if (!report || this.warned.has(backend)) return;
    this.warned.add(backend);
    const local = Math.round(counted);
    report.emit({
      type: 'run-warning',
      runId: report.runId,
      code: 'usage-under-reported',
      message:
        `${backend.provider} ${backend.modelId} reported ${reported} input tokens for a request of ${local} tokens ` +
        `as counted here (${(reported / local).toFixed(3)}×). Reports under ${MIN_REPORTED_SHARE}× the local count are ` +
        'ignored for calibration: they are not counts of the request (some servers report only the prompt tokens not ' +
        'served from a cache), and trusting them would send requests larger than the window. Counts for this backend ' +
        'keep their current factor. Reported once per backend.',
      purpose: report.purpose,
      scope: report.scope,
    });
  }
}
