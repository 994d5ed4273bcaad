import type { Message } from '../backend/types.js';
import { toHarnessError } from '../errors.js';
import { callModel } from '../llm/call-model.js';
import type { DataMark } from '../prompts/datamark.js';
import type { UsageCalibration } from './calibration.js';
import { windowOf } from './limits.js';
import { historySummaryPrompt, pageSummaryPrompt, renderTranscript } from './summary-prompt.js';
import { calibrate, MESSAGE_OVERHEAD_TOKENS, uncalibrated, type TokenCounter } from './token-counter.js';
import { headTail } from './truncate.js';
import type { MemoryScope } from './types.js';

/** Share of the summariser's window its input may fill; the rest is prompt and answer. */
const SUMMARIZER_INPUT_SHARE = 0.5;
/** Each message of a compressed history is cut to this before the summariser sees it. */
const TRANSCRIPT_MESSAGE_CHARS = 4_000;

/**
 * Writes the memory's summaries with the scope's summariser (purpose `summarize`), through the one observed model
 * call, so they emit `llm-request`/`llm-response`, use the scope's sampling and calibrate the summariser's counts. A
 * failing summariser is reported once per run (`run-warning`, code `summarizer-failed`); its callers fall back to
 * pruning or head-and-tail cuts.
 * @internal
 */
export class SummaryWriter {
  // Runs already warned about a failing summariser.
  private readonly warned = new Set<string>();

  constructor(
    private readonly counter: TokenCounter,
    private readonly calibration: UsageCalibration,
  ) {}

  /**
   * A technical summary (≤ `maxChars`) of earlier rounds; undefined when the summariser fails. The transcript goes to
   * the summariser as one block of untrusted data marked with `mark`, and its system prompt says so.
   */
  async history(
    older: readonly Message[],
    scope: MemoryScope,
    maxChars: number,
    mark: DataMark,
  ): Promise<string | undefined> {
    const transcript = renderTranscript(older, TRANSCRIPT_MESSAGE_CHARS);
    const system = mark.withRule(historySummaryPrompt(maxChars));
    const text = await this.summarize(scope, system, transcript, maxChars, 'middle of the history omitted', mark);
    return text === undefined ? undefined : headTail(text, maxChars);
  }

  /** A summary (≤ `maxChars`) of a long page, sent as untrusted data marked with `mark`; undefined when it fails. */
  async page(text: string, scope: MemoryScope, maxChars: number, mark: DataMark): Promise<string | undefined> {
    const system = mark.withRule(pageSummaryPrompt(maxChars));
    const summary = await this.summarize(scope, system, text, maxChars, 'middle of the page omitted', mark);
    return summary === undefined ? undefined : headTail(summary, maxChars);
  }

  /**
   * Calls the summariser on `text`, cut (head and tail, with `note`) so that the request and the answer it allows fit
   * the summariser's window; undefined when it fails, answers nothing or its window is too small for any input. An
   * abort propagates.
   */
  private async summarize(
    scope: MemoryScope,
    system: string,
    text: string,
    maxChars: number,
    note: string,
    mark: DataMark,
  ): Promise<string | undefined> {
    const backend = scope.summarizer;
    const factor = this.calibration.factor(backend);
    const instructions: Message = { role: 'system', content: system };
    const maxOutputTokens = Math.ceil(maxChars / 2);
    const window = windowOf(backend);
    // Uncalibrated tokens of the request without the input's text (its markers included).
    const fixed =
      this.counter.request([instructions], [], 1) + MESSAGE_OVERHEAD_TOKENS + this.counter.text(mark.block(''), 1);
    const budget = Math.min(
      uncalibrated(Math.floor(window * SUMMARIZER_INPUT_SHARE), factor),
      uncalibrated(window - maxOutputTokens, factor) - fixed,
    );
    const input = budget > 0 ? this.fitText(text, budget, note) : undefined;
    if (!input) return undefined;
    // Sized while fitting: tokenizing the input again for the request event would double the cost of a summary.
    const requestTokens = calibrate(fixed + input.tokens, factor);
    try {
      const result = await callModel(
        {
          backend,
          purpose: 'summarize',
          runId: scope.runId,
          scope: scope.scope,
          emit: scope.emit,
          countTokens: () => requestTokens,
          signal: scope.signal,
          sampling: scope.sampling,
          maxOutputTokens,
          // Calibration learns from counts only: a byte bound would lower the factor.
          onUsage: (counted, usage, used) => {
            if (input.exact) {
              const report = {
                runId: scope.runId,
                purpose: 'summarize' as const,
                scope: scope.scope,
                emit: scope.emit,
              };
              this.calibration.observe(used, counted, usage, report);
            }
          },
        },
        { messages: [instructions, { role: 'user', content: mark.block(input.text) }] },
      );
      const summary = result.message.content.trim();
      return summary.length > 0 ? summary : undefined;
    } catch (error) {
      if (scope.signal.aborted) throw toHarnessError(error, 'aborted');
      this.warnOnce(scope, error);
      return undefined;
    }
  }

  private warnOnce(scope: MemoryScope, error: unknown): void {
    if (this.warned.has(scope.runId)) return;
    this.warned.add(scope.runId);
    const { provider, modelId } = scope.summarizer;
    scope.emit({
      type: 'run-warning',
      runId: scope.runId,
      code: 'summarizer-failed',
      message:
        `The summariser (${provider} ${modelId}) failed: ${toHarnessError(error).message}. Until it works, ` +
        'compressions prune history instead (memory-prune, reason summary-failed) and long pages are cut head and ' +
        'tail. Reported once per run.',
      purpose: scope.purpose,
      scope: scope.scope,
    });
  }

  /**
   * Cuts a summariser input (head and tail) to at most `budget` uncalibrated tokens; undefined when it cannot.
   * `tokens` is the input's count, or (not `exact`) an upper bound: its UTF-8 bytes when that alone shows it fits, or
   * the tokenizer's own bound (gpt-tokenizer's for a long run without word boundaries).
   */
  private fitText(
    text: string,
    budget: number,
    note: string,
  ): { text: string; tokens: number; exact: boolean } | undefined {
    // A token spans a few characters at most in practice: pre-cut huge inputs before tokenizing them.
    let fitted = text.length > budget * 8 ? headTail(text, budget * 4, note) : text;
    const bound = this.counter.textBound(fitted, 1);
    if (bound.tokens <= budget) return { text: fitted, ...bound };
    let measured = bound.exact ? bound : this.counter.measureText(fitted, 1);
    for (let i = 0; i < 4 && measured.tokens > budget; i++) {
      fitted = headTail(fitted, Math.floor((fitted.length * budget * 0.9) / measured.tokens), note);
      measured = this.counter.measureText(fitted, 1);
    }
    // A tokenizer's bound (a long run without word boundaries) fits as safely as a count but must not calibrate.
    return measured.tokens <= budget ? { text: fitted, ...measured } : undefined;
  }
}
