import type { LlmBackend, Message, ToolSpec, Usage } from '../backend/types.js';
import { ContextOverflowError } from '../errors.js';
import { DataMark } from '../prompts/datamark.js';
import type { ToolInvocation } from '../tools/types.js';
import { ageObservations } from './aging.js';
import { UsageCalibration } from './calibration.js';
import { FilePreviewBudget } from './file-budget.js';
import { emergencyPrune, planCompression } from './fit.js';
import { requestLimits, type RequestLimits } from './limits.js';
import { cachesPrompts } from './prompt-cache.js';
import { parseMemoryOptions, type MemoryManagerOptions, type ResolvedMemoryOptions } from './options.js';
import { OutputLog } from './output-log.js';
import { SUMMARY_HEADER } from './summary-prompt.js';
import { SummaryWriter } from './summary-writer.js';
import { calibrate, TokenCounter, uncalibrated } from './token-counter.js';
import { gptTokenizer } from './tokenizer.js';
import { headTail, searchSnippets } from './truncate.js';
import type { ExecutionMemory, MemoryScope, PendingRequest, UsageReport } from './types.js';

// Where full outputs are saved belongs to the manager's public surface (src/index.ts imports it from here).
export { OUTPUTS_DIR } from './output-log.js';

/** A file read always shows at least this much, even when the scope's parser budget is used up. */
const MIN_FILE_PREVIEW_CHARS = 1_000;
/** After an overflow error from the backend, prune to this share of the rejected request (and of the window). */
const OVERFLOW_TARGET = 0.8;

type PruneReason = 'emergency-threshold' | 'summary-failed' | 'context-length-error';

/** How an observation will be cut, decided before the full output is saved. */
type Cut = { strategy: 'snippets' | 'head-tail' | 'summary' } | { strategy: 'preview'; allowedChars: number };

interface Bounded {
  text: string;
  strategy: 'snippets' | 'summary' | 'preview' | 'head-tail';
  /** Tokens of `text`, when already counted. */
  tokens?: number;
}

/**
 * The shipped {@link ExecutionMemory}: bounds every tool observation (saving the full output through the workspace),
 * and before every model call compresses earlier rounds into a model-written summary above the compression threshold
 * and prunes deterministically above the hard limit, min(`emergencyAt` × window, window − reserved output), so that
 * no request it returns exceeds that limit. Token counts are cached per message and calibrated per backend from the
 * usage its provider reports; a request whose UTF-8 byte bound is under the compression threshold is not counted
 * (docs/memory.md, "When counting is exact").
 *
 * @example
 * ```ts
 * const memory = new MemoryManager({ compressAt: 0.85, observationAging: { keepRecentRounds: 3 } });
 * const executor = new Executor({ backend, tools, memory, emit });
 * ```
 */
export class MemoryManager implements ExecutionMemory {
  /** The options after defaults. */
  readonly options: ResolvedMemoryOptions;
  private readonly counter: TokenCounter;
  private readonly calibration: UsageCalibration;
  private readonly outputs: OutputLog;
  private readonly previews: FilePreviewBudget;
  private readonly summaries: SummaryWriter;
  /** Marks summaries of scopes that bring no boundary of their own (a custom executor's). */
  private readonly ownMark = DataMark.random();

  constructor(options: MemoryManagerOptions = {}) {
    this.options = parseMemoryOptions(options);
    this.counter = new TokenCounter(options.tokenizer ?? gptTokenizer(this.options.encoding));
    this.calibration = new UsageCalibration(this.options.calibration);
    this.outputs = new OutputLog(this.options.observationAging !== false);
    this.previews = new FilePreviewBudget(this.options.fileParserTokens);
    this.summaries = new SummaryWriter(this.counter, this.calibration);
  }

  /**
   * The request's size in tokens: messages, tool specs and per-message overhead (tokenized once per message), times
   * `backend`'s calibration factor (the configured `calibration` without a backend).
   */
  countRequest(messages: readonly Message[], tools: readonly ToolSpec[], backend?: LlmBackend): number {
    return this.counter.request(messages, tools, this.calibration.factor(backend));
  }

  /**
   * The request's size as cheaply as it is known, times `backend`'s calibration factor: `countRequest`'s figure
   * (`exact`) when every message was counted, which {@link fitRequest} does whenever the request came near the
   * compression threshold; else an upper bound from the UTF-8 bytes of the messages not counted. With a tokenizer
   * that is not `boundedByUtf8Bytes`, always the exact count.
   */
  sizeRequest(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    backend?: LlmBackend,
  ): { tokens: number; exact: boolean } {
    return this.counter.requestBound(messages, tools, this.calibration.factor(backend));
  }

  /** Tokens of a text by this manager's tokenizer, times `backend`'s calibration factor. */
  countText(text: string, backend?: LlmBackend): number {
    return this.counter.text(text, this.calibration.factor(backend));
  }

  /**
   * Calibrates `backend`'s counts: from now on they are multiplied by the running ratio of the input tokens its
   * provider reported to those counted here, plus a 5 % margin, never below 0.9 (see `CALIBRATION_FLOOR`). Calls
   * without usage or under 1 000 tokens are ignored, and so is a report under half the count: the first such report
   * of a backend emits a `run-warning` (`usage-under-reported`) through `report`. `countedInputTokens` must be an
   * exact count (never a `sizeRequest` bound): a bound would lower the factor.
   */
  observeUsage(backend: LlmBackend, countedInputTokens: number, usage: Usage, report?: UsageReport): void {
    this.calibration.observe(backend, countedInputTokens, usage, report);
  }

  /**
   * Bounds a tool result by its observation kind; a cut output is saved under `.harness/outputs/` and named.
   * The `memory-truncate` event's token figures are estimated from the characters per token counted so far:
   * tokenizing the raw output, and the observation once more before the dialogue counts it, would cost more
   * than the rest of the step. Budgets always use exact counts.
   */
  async boundObservation(invocation: ToolInvocation, scope: MemoryScope): Promise<string> {
    const { text } = invocation;
    const factor = this.calibration.factor(scope.backend);
    // Decided (and the file budget charged) before any await, so the parallel calls of one reply share the budget
    // and queue their saves in call order.
    const cut = this.cutOf(invocation, scope, factor);
    const keep = cut !== undefined || (this.options.observationAging !== false && text.length > 0);
    const saving = keep ? this.outputs.save(invocation, scope) : undefined;
    if (!cut) {
      await saving;
      return text;
    }
    const summarizing =
      cut.strategy === 'summary'
        ? this.summaries.page(text, scope, this.visitSummaryChars(), this.markOf(scope))
        : undefined;
    const [saved, summary] = await Promise.all([saving, summarizing]);
    const note = saved?.location
      ? `full output saved to ${saved.location}; read_file it (startLine/endLine) for the rest`
      : 'the full output could not be saved';
    const bounded = this.bound(invocation, scope, cut, note, summary, factor);
    const tokensAfter = bounded.tokens ?? this.counter.estimate(bounded.text, factor);
    scope.emit({
      type: 'memory-truncate',
      runId: scope.runId,
      purpose: scope.purpose,
      scope: scope.scope,
      toolName: invocation.toolName,
      callId: invocation.callId,
      strategy: bounded.strategy,
      tokensBefore: Math.max(tokensAfter, this.counter.estimate(text, factor)),
      tokensAfter,
      ...(saved?.location ? { savedTo: saved.path, savedLines: saved.lines } : {}),
    });
    return bounded.text;
  }

  /**
   * Returns the dialogue to send: with observation aging, old observations aged first (in batches of `batchRounds`
   * where the backend caches prompts); unchanged when it fits under the compression threshold (decided without
   * tokenizing when even its UTF-8 byte bound fits; see `sizeRequest`); else the observations waiting for their
   * batch aged, and if that is not enough earlier rounds summarised; then, above the hard limit or when summarising
   * failed, pruned deterministically. Both limits leave the request's `maxOutputTokens` free in the window. Throws
   * `ContextOverflowError` when the protected prefix and the last round alone exceed the hard limit.
   */
  async fitRequest(request: PendingRequest, scope: MemoryScope): Promise<Message[]> {
    const o = this.options;
    const limits = requestLimits(scope.backend, request.maxOutputTokens, o);
    let factor = this.calibration.factor(scope.backend);
    const aging = o.observationAging;
    // Where the provider caches prompts, old observations age in batches: each aging rewrites the cached prefix.
    let messages = this.age(request, scope, aging !== false && cachesPrompts(scope.backend) ? aging.batchRounds : 1);
    // Far below the threshold the UTF-8 bound already decides (see TokenCounter.requestBound); near it, count.
    const bound = this.counter.requestBound(messages, request.tools, factor);
    if (bound.tokens <= limits.compressAt) return messages;
    // Whether to compress is decided on a count: wait (without blocking) for tables that are still loading.
    if (!bound.exact) await this.counter.ready();
    let tokens = bound.exact ? bound.tokens : this.counter.request(messages, request.tools, factor);
    if (tokens <= limits.compressAt) return messages;
    if (aging !== false) {
      // Observations still waiting for their batch age before anything is summarised: aging rewrites the dialogue
      // from the first waiting one on, a summary from the start of the history.
      const aged = this.age({ ...request, messages }, scope, 1);
      if (aged.some((message, i) => message !== messages[i])) {
        messages = aged;
        tokens = this.counter.request(messages, request.tools, factor);
        if (tokens <= limits.compressAt) return messages;
      }
    }

    let reason: PruneReason = 'emergency-threshold';
    const plan = planCompression(messages, request.protectedCount, o.keepRecentRounds);
    if (plan.older.length > 0) {
      const mark = this.markOf(scope);
      const summary = await this.summaries.history(plan.older, scope, o.maxSummaryChars, mark);
      // The summary's usage may have recalibrated this very backend (when it also summarises).
      factor = this.calibration.factor(scope.backend);
      tokens = this.counter.request(messages, request.tools, factor);
      if (summary === undefined) {
        reason = 'summary-failed';
      } else {
        const compressed: Message[] = [
          ...plan.prefix,
          // Written by a model from untrusted tool output: it comes back as marked data, like that output.
          { role: 'user', content: `${SUMMARY_HEADER}\n${mark.block(summary)}` },
          ...plan.recent,
        ];
        const after = this.counter.request(compressed, request.tools, factor);
        // A summary longer than the rounds it replaces would only grow the dialogue (and be re-summarised at the next
        // step): treat it as a failed summary and prune instead.
        if (after >= tokens) return this.prune(messages, request, scope, limits, limits.compressAt, 'summary-failed');
        scope.emit({
          type: 'memory-compress',
          runId: scope.runId,
          purpose: scope.purpose,
          scope: scope.scope,
          tokensBefore: tokens,
          tokensAfter: after,
          roundsSummarized: plan.roundsSummarized,
        });
        this.previews.releaseRemoved(scope, messages, compressed);
        messages = compressed;
        tokens = after;
      }
    }
    if (tokens <= limits.limit && reason !== 'summary-failed') return messages;
    // Pruning down to the compression threshold (not just under the hard limit) spares the next steps
    // a summariser call each; the hard limit is what must hold.
    return this.prune(messages, request, scope, limits, limits.compressAt, reason);
  }

  /** The request's dialogue with its old observations aged (see {@link ageObservations}); their preview budget given back. */
  private age(request: PendingRequest, scope: MemoryScope, batchRounds: number): Message[] {
    if (this.options.observationAging === false) return request.messages;
    const aged = ageObservations(
      request.messages,
      request.protectedCount,
      this.options.observationAging.keepRecentRounds,
      (id) => this.outputs.locationOf(scope.runId, scope.scope, id),
      batchRounds,
    );
    this.previews.releaseRemoved(scope, request.messages, aged);
    return aged;
  }

  /**
   * After the backend still answered "context length exceeded": prunes to 0.8 × the rejected request's size (and at
   * most 0.8 × window, and the hard limit), so the retry is always smaller than what was rejected, even when the
   * backend's real window or tokenizer differs from what it declares.
   */
  pruneAfterOverflow(request: PendingRequest, scope: MemoryScope): Message[] {
    const limits = requestLimits(scope.backend, request.maxOutputTokens, this.options);
    const rejected = this.countRequest(request.messages, request.tools, scope.backend);
    const target = Math.floor(Math.min(OVERFLOW_TARGET * limits.window, OVERFLOW_TARGET * rejected, limits.limit));
    return this.prune(request.messages, request, scope, limits, target, 'context-length-error');
  }

  private prune(
    messages: Message[],
    request: PendingRequest,
    scope: MemoryScope,
    limits: RequestLimits,
    target: number,
    reason: PruneReason,
  ): Message[] {
    const factor = this.calibration.factor(scope.backend);
    // Pruning works on uncalibrated counts (cached per message); the factor applies to the budget instead.
    const fixed = this.counter.request([], request.tools, 1);
    const before = this.counter.request(messages, request.tools, factor);
    const result = emergencyPrune(messages, request.protectedCount, uncalibrated(target, factor) - fixed, (m) =>
      this.counter.message(m, 1),
    );
    const after = calibrate(result.tokens + fixed, factor);
    if (after > limits.limit) {
      const prefix = this.counter.request(messages.slice(0, request.protectedCount), [], factor);
      const calibrated = factor === 1 ? '' : `; counts are calibrated ×${factor.toFixed(2)} to this model's tokenizer`;
      throw new ContextOverflowError(
        `The request needs ${after} tokens after pruning every earlier round (protected prefix ${prefix} tokens, ` +
          `tool specs ${calibrate(fixed, factor)} tokens, the rest is the last round) but the limit is ${limits.limit} ` +
          `tokens: min(${this.options.emergencyAt} × the ${limits.window}-token window, the window less ` +
          `${limits.reserved} tokens reserved for the answer)${calibrated}. Shorten the request or objective, offer ` +
          'fewer tools, lower memory.toolMessageChars or the output reserve (maxOutputTokens), or use a backend with ' +
          'a larger context window.',
        { requestTokens: after, budgetTokens: limits.limit },
      );
    }
    scope.emit({
      type: 'memory-prune',
      runId: scope.runId,
      purpose: scope.purpose,
      scope: scope.scope,
      tokensBefore: before,
      tokensAfter: after,
      messagesRemoved: result.messagesRemoved,
      reason,
    });
    this.previews.releaseRemoved(scope, messages, result.messages);
    return result.messages;
  }

  /** How an observation must be cut, or undefined when it enters whole; charges a file read to the scope's budget. */
  private cutOf(invocation: ToolInvocation, scope: MemoryScope, factor: number): Cut | undefined {
    const o = this.options;
    const { text } = invocation;
    switch (invocation.observation) {
      case 'search':
        return text.length > o.toolMessageChars ? { strategy: 'snippets' } : undefined;
      case 'visit':
        return text.length > o.visitSummaryThresholdChars ? { strategy: 'summary' } : undefined;
      case 'file': {
        const remaining = this.previews.remaining(scope);
        // Only a text that could fit is counted in full; anything longer is cut first.
        const tokens = text.length <= o.filePreviewChars ? this.counter.text(text, factor) : Number.POSITIVE_INFINITY;
        if (tokens <= remaining) {
          this.previews.charge(scope, invocation.callId, tokens);
          return undefined;
        }
        const sample = text.slice(0, Math.min(text.length, o.filePreviewChars));
        const charsPerToken =
          sample.length / Math.max(1, Number.isFinite(tokens) ? tokens : this.counter.text(sample, factor));
        const allowedChars = Math.max(
          MIN_FILE_PREVIEW_CHARS,
          Math.min(o.filePreviewChars, Math.floor(remaining * charsPerToken)),
        );
        // Reserved now and settled once the preview is written, so a parallel read in the same reply sees it spent.
        this.previews.charge(scope, invocation.callId, Math.ceil(allowedChars / charsPerToken));
        return { strategy: 'preview', allowedChars };
      }
      default:
        return text.length > o.toolMessageChars ? { strategy: 'head-tail' } : undefined;
    }
  }

  /** Cuts an observation as decided, with `note` saying where the full output is. */
  private bound(
    invocation: ToolInvocation,
    scope: MemoryScope,
    cut: Cut,
    note: string,
    summary: string | undefined,
    factor: number,
  ): Bounded {
    const o = this.options;
    const { text } = invocation;
    if (cut.strategy === 'snippets')
      return { text: searchSnippets(text, o.toolMessageChars, note), strategy: 'snippets' };
    if (cut.strategy === 'preview') {
      const budgetNote =
        cut.allowedChars < o.filePreviewChars ? '; this scope has nearly used its file-preview budget' : '';
      const preview = headTail(text, cut.allowedChars, `${note}${budgetNote}`);
      const tokens = this.counter.text(preview, factor);
      this.previews.charge(scope, invocation.callId, tokens);
      return { text: preview, strategy: 'preview', tokens };
    }
    if (cut.strategy === 'summary' && summary !== undefined) {
      return { text: this.visitObservation(text, summary, note), strategy: 'summary' };
    }
    // Generic output, or a page whose summary failed.
    return { text: headTail(text, o.toolMessageChars, note), strategy: 'head-tail' };
  }

  /** A long page as the model sees it: the summary, then as much of the page's start as fits `toolMessageChars`. */
  private visitObservation(text: string, summary: string, note: string): string {
    const head = `Page summary (the page has ${text.length} characters; ${note}):\n${summary}`;
    const prefixChars = Math.max(0, this.options.toolMessageChars - head.length - 60);
    return `${head}\n\n[First ${Math.min(prefixChars, text.length)} characters of the page:]\n${text.slice(0, prefixChars)}`;
  }

  private markOf(scope: MemoryScope): DataMark {
    return scope.dataMark ?? this.ownMark;
  }

  /** Longest page summary: half of a generic observation, so the page's start fits beside it. */
  private visitSummaryChars(): number {
    return Math.floor(this.options.toolMessageChars / 2);
  }
}
