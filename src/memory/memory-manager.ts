import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { LlmBackend, Message, ToolSpec } from '../backend/types.js';
import { DEFAULTS } from '../defaults.js';
import { ContextOverflowError, toHarnessError } from '../errors.js';
import type { ToolInvocation } from '../tools/types.js';
import { ageObservations } from './aging.js';
import { emergencyPrune, planCompression } from './fit.js';
import { parseMemoryOptions, type MemoryManagerOptions, type ResolvedMemoryOptions } from './options.js';
import { historySummaryPrompt, pageSummaryPrompt, renderTranscript, SUMMARY_HEADER } from './summary-prompt.js';
import { MESSAGE_OVERHEAD_TOKENS, TokenCounter } from './token-counter.js';
import { gptTokenizer } from './tokenizer.js';
import { headTail, searchSnippets } from './truncate.js';
import type { ExecutionMemory, MemoryScope, PendingRequest } from './types.js';

/** Where full tool outputs are saved, relative to the workspace root. */
export const OUTPUTS_DIR = '.harness/outputs';
/** Share of the summariser's window its input may fill; the rest is prompt and answer. */
const SUMMARIZER_INPUT_SHARE = 0.5;
/** Each message of a compressed history is cut to this before the summariser sees it. */
const TRANSCRIPT_MESSAGE_CHARS = 4_000;
/** A file read always shows at least this much, even when the scope's parser budget is used up. */
const MIN_FILE_PREVIEW_CHARS = 1_000;
/** After an overflow error from the backend, prune to this share of the rejected request (and of the window). */
const OVERFLOW_TARGET = 0.8;

type Strategy = 'snippets' | 'summary' | 'preview' | 'head-tail';
interface Bounded {
  text: string;
  strategy: Strategy;
  /** Tokens of `text`, when already counted. */
  tokens?: number;
}

function windowOf(backend: LlmBackend): number {
  const window = backend.contextWindow;
  return Number.isFinite(window) && window > 0 ? window : DEFAULTS.contextWindow;
}

/** Where a full output was saved: a range of lines of its scope's log, or nowhere when saving failed. */
type SavedOutput = { path: string; lines: { start: number; end: number }; location: string } | { path: string; location: undefined };

function linesIn(text: string): number {
  let lines = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines++;
  return lines;
}

/** The text of a log this manager has not written to yet (another manager's, or one left from an earlier attempt). */
function existingText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function safeName(text: string): string {
  return text.replace(/[^\w.-]/g, '_');
}

/**
 * The shipped {@link ExecutionMemory}: bounds every tool observation (saving the full output in the
 * workspace), and before every model call compresses earlier rounds into a model-written summary
 * above `compressAt` × window and prunes deterministically above `emergencyAt` × window, so no request
 * leaves over `emergencyAt` × window. Token counts are cached per message.
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
  // Saved full outputs by run, scope and call, kept only with aging on: its digests point at them.
  private readonly saved = new Map<string, string>();
  // File-preview tokens spent per run and scope (the shared parser budget).
  private readonly fileTokens = new Map<string, number>();
  // Output directories already created, so a step does not pay for mkdir.
  private readonly directories = new Set<string>();
  // Lines in each output log so far, by absolute path, so an append knows its line range without reading.
  private readonly logLines = new Map<string, number>();

  constructor(options: MemoryManagerOptions = {}) {
    this.options = parseMemoryOptions(options);
    this.counter = new TokenCounter(options.tokenizer ?? gptTokenizer(this.options.encoding), this.options.calibration);
  }

  /** The request's size in tokens: messages, tool specs and per-message overhead (cached per message). */
  countRequest(messages: readonly Message[], tools: readonly ToolSpec[]): number {
    return this.counter.request(messages, tools);
  }

  /** Tokens of a text by this manager's tokenizer and calibration. */
  countText(text: string): number {
    return this.counter.text(text);
  }

  /**
   * Bounds a tool result by its observation kind; a cut output is saved under `.harness/outputs/` and named.
   * The `memory-truncate` event's token figures are estimated from the characters per token counted so far:
   * tokenizing the raw output, and the observation once more before the dialogue counts it, would cost more
   * than the rest of the step. Budgets always use exact counts.
   */
  async boundObservation(invocation: ToolInvocation, scope: MemoryScope): Promise<string> {
    const { text } = invocation;
    const o = this.options;
    let saved: SavedOutput | undefined;
    // Saving happens before any await, so parallel calls of one reply append to the log one after another.
    const note = (): string => {
      saved ??= this.save(invocation, scope);
      return saved.location
        ? `full output saved to ${saved.location}; read_file it (startLine/endLine) for the rest`
        : 'the full output could not be saved';
    };
    let bounded: Bounded | undefined;
    switch (invocation.observation) {
      case 'search':
        if (text.length > o.toolMessageChars) {
          bounded = { text: searchSnippets(text, o.toolMessageChars, note()), strategy: 'snippets' };
        }
        break;
      case 'visit':
        if (text.length > o.visitSummaryThresholdChars) bounded = await this.boundVisit(text, scope, note());
        break;
      case 'file':
        bounded = this.boundFile(text, scope, note);
        break;
      default:
        if (text.length > o.toolMessageChars) {
          bounded = { text: headTail(text, o.toolMessageChars, note()), strategy: 'head-tail' };
        }
    }
    if (!bounded) {
      if (o.observationAging !== false && text.length > 0) note();
      return text;
    }
    const tokensAfter = bounded.tokens ?? this.counter.estimate(bounded.text);
    scope.emit({
      type: 'memory-truncate',
      runId: scope.runId,
      purpose: scope.purpose,
      scope: scope.scope,
      toolName: invocation.toolName,
      callId: invocation.callId,
      strategy: bounded.strategy,
      tokensBefore: Math.max(tokensAfter, this.counter.estimate(text)),
      tokensAfter,
      ...(saved?.location ? { savedTo: saved.path, savedLines: saved.lines } : {}),
    });
    return bounded.text;
  }

  /**
   * Returns the dialogue to send: unchanged when it fits under `compressAt` × window; else earlier rounds
   * summarised; then, above `emergencyAt` × window or when summarising failed, pruned deterministically.
   * Throws `ContextOverflowError` when the protected prefix and the last round alone exceed the limit.
   */
  async fitRequest(request: PendingRequest, scope: MemoryScope): Promise<Message[]> {
    const o = this.options;
    const window = windowOf(scope.backend);
    const compressLimit = Math.floor(o.compressAt * window);
    const limit = Math.floor(o.emergencyAt * window);
    let messages = request.messages;
    if (o.observationAging !== false) {
      messages = ageObservations(messages, request.protectedCount, o.observationAging.keepRecentRounds, (id) =>
        this.saved.get(this.key(scope, id)),
      );
    }
    let tokens = this.counter.request(messages, request.tools);
    if (tokens <= compressLimit) return messages;

    let reason: 'emergency-threshold' | 'summary-failed' = 'emergency-threshold';
    const plan = planCompression(messages, request.protectedCount, o.keepRecentRounds);
    if (plan.older.length > 0) {
      const summary = await this.summarizeHistory(plan.older, scope);
      if (summary === undefined) {
        reason = 'summary-failed';
      } else {
        const compressed: Message[] = [
          ...plan.prefix,
          { role: 'user', content: `${SUMMARY_HEADER}\n${summary}` },
          ...plan.recent,
        ];
        const after = this.counter.request(compressed, request.tools);
        // A summary longer than the rounds it replaces would only grow the dialogue (and be re-summarised at the next
        // step): treat it as a failed summary and prune instead.
        if (after >= tokens) return this.prune(messages, request, scope, compressLimit, limit, 'summary-failed');
        scope.emit({
          type: 'memory-compress',
          runId: scope.runId,
          purpose: scope.purpose,
          scope: scope.scope,
          tokensBefore: tokens,
          tokensAfter: after,
          roundsSummarized: plan.roundsSummarized,
        });
        messages = compressed;
        tokens = after;
      }
    }
    if (tokens <= limit && reason !== 'summary-failed') return messages;
    // Pruning down to the compression threshold (not just under the hard limit) spares the next steps
    // a summariser call each; the hard limit is what must hold.
    return this.prune(messages, request, scope, compressLimit, limit, reason);
  }

  /**
   * After the backend still answered "context length exceeded": prunes to 0.8 × the rejected request's size (and at
   * most 0.8 × window or `emergencyAt` × window), so the retry is always smaller than what was rejected, even when
   * the backend's real window or tokenizer differs from what it declares.
   */
  pruneAfterOverflow(request: PendingRequest, scope: MemoryScope): Message[] {
    const window = windowOf(scope.backend);
    const limit = Math.floor(this.options.emergencyAt * window);
    const rejected = this.counter.request(request.messages, request.tools);
    const target = Math.floor(Math.min(OVERFLOW_TARGET * window, OVERFLOW_TARGET * rejected, limit));
    return this.prune(request.messages, request, scope, target, limit, 'context-length-error');
  }

  private prune(
    messages: Message[],
    request: PendingRequest,
    scope: MemoryScope,
    target: number,
    limit: number,
    reason: 'emergency-threshold' | 'summary-failed' | 'context-length-error',
  ): Message[] {
    const fixed = this.counter.request([], request.tools);
    const before = this.counter.request(messages, request.tools);
    const result = emergencyPrune(messages, request.protectedCount, target - fixed, (m) => this.counter.message(m));
    const after = result.tokens + fixed;
    if (after > limit) {
      const prefix = this.counter.request(messages.slice(0, request.protectedCount), []);
      throw new ContextOverflowError(
        `The request needs ${after} tokens after pruning every earlier round (protected prefix ${prefix} tokens, ` +
          `tool specs ${fixed} tokens, the rest is the last round) but the limit is ${limit} tokens of a ` +
          `${windowOf(scope.backend)}-token window. Shorten the request or objective, offer fewer tools, lower ` +
          `memory.toolMessageChars, or use a backend with a larger context window.`,
        { requestTokens: after, budgetTokens: limit },
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
    return result.messages;
  }

  private async summarizeHistory(older: Message[], scope: MemoryScope): Promise<string | undefined> {
    const maxChars = this.options.maxSummaryChars;
    const transcript = renderTranscript(older, TRANSCRIPT_MESSAGE_CHARS);
    const text = await this.summarize(scope, historySummaryPrompt(maxChars), transcript, maxChars, 'middle of the history omitted');
    return text === undefined ? undefined : headTail(text, maxChars);
  }

  private async boundVisit(text: string, scope: MemoryScope, note: string): Promise<Bounded> {
    const o = this.options;
    const summaryChars = Math.floor(o.toolMessageChars / 2);
    const summary = await this.summarize(scope, pageSummaryPrompt(summaryChars), text, summaryChars, 'middle of the page omitted');
    if (summary === undefined) return { text: headTail(text, o.toolMessageChars, note), strategy: 'head-tail' };
    const head = `Page summary (the page has ${text.length} characters; ${note}):\n${headTail(summary, summaryChars)}`;
    const prefixChars = Math.max(0, o.toolMessageChars - head.length - 60);
    const observation = `${head}\n\n[First ${Math.min(prefixChars, text.length)} characters of the page:]\n${text.slice(0, prefixChars)}`;
    return { text: observation, strategy: 'summary' };
  }

  private boundFile(text: string, scope: MemoryScope, note: () => string): Bounded | undefined {
    const o = this.options;
    const key = `${scope.runId}\u0000${scope.scope}`;
    const used = this.fileTokens.get(key) ?? 0;
    const remaining = Math.max(0, o.fileParserTokens - used);
    // Only a text that could fit is counted in full; anything longer is cut first.
    const tokens = text.length <= o.filePreviewChars ? this.counter.text(text) : Number.POSITIVE_INFINITY;
    if (tokens <= remaining) {
      this.fileTokens.set(key, used + tokens);
      return undefined;
    }
    const sample = text.slice(0, Math.min(text.length, o.filePreviewChars));
    const charsPerToken = sample.length / Math.max(1, Number.isFinite(tokens) ? tokens : this.counter.text(sample));
    const allowed = Math.max(MIN_FILE_PREVIEW_CHARS, Math.min(o.filePreviewChars, Math.floor(remaining * charsPerToken)));
    const budgetNote = allowed < o.filePreviewChars ? '; this scope has nearly used its file-preview budget' : '';
    const preview = headTail(text, allowed, `${note()}${budgetNote}`);
    const previewTokens = this.counter.text(preview);
    this.fileTokens.set(key, used + previewTokens);
    return { text: preview, strategy: 'preview', tokens: previewTokens };
  }

  /**
   * Calls the summariser (purpose `summarize`) on `text`, cut (head and tail, with `note`) so that the request and
   * the answer it allows fit the summariser's window; undefined when it fails, answers nothing or its window is too
   * small for any input. An abort propagates.
   */
  private async summarize(
    scope: MemoryScope,
    system: string,
    text: string,
    maxChars: number,
    note: string,
  ): Promise<string | undefined> {
    const backend = scope.summarizer;
    const instructions: Message = { role: 'system', content: system };
    const maxOutputTokens = Math.ceil(maxChars / 2);
    const window = windowOf(backend);
    const reserved = this.counter.request([instructions], []) + MESSAGE_OVERHEAD_TOKENS + maxOutputTokens;
    const budget = Math.min(Math.floor(window * SUMMARIZER_INPUT_SHARE), window - reserved);
    if (budget <= 0) return undefined;
    const input = this.fitText(text, budget, note);
    if (!input) return undefined;
    const messages: Message[] = [instructions, { role: 'user', content: input.text }];
    const common = { runId: scope.runId, purpose: 'summarize' as const, scope: scope.scope };
    scope.emit({
      type: 'llm-request',
      ...common,
      provider: backend.provider,
      modelId: backend.modelId,
      messages: messages.length,
      requestTokens: this.counter.request([instructions], []) + MESSAGE_OVERHEAD_TOKENS + input.tokens,
    });
    const started = performance.now();
    try {
      const result = await backend.generate({
        messages,
        purpose: 'summarize',
        signal: scope.signal,
        maxOutputTokens,
      });
      scope.emit({
        type: 'llm-response',
        ...common,
        finishReason: result.finishReason,
        usage: result.usage,
        toolCalls: result.message.toolCalls.length,
        durationMs: performance.now() - started,
      });
      const text = result.message.content.trim();
      return text.length > 0 ? text : undefined;
    } catch (error) {
      if (scope.signal.aborted) throw toHarnessError(error, 'aborted');
      return undefined;
    }
  }

  /** Cuts a summariser input (head and tail) to at most `budget` tokens; returns it with its tokens, or undefined when it cannot. */
  private fitText(text: string, budget: number, note: string): { text: string; tokens: number } | undefined {
    // A token spans a few characters at most in practice: pre-cut huge inputs before tokenizing them.
    let fitted = text.length > budget * 8 ? headTail(text, budget * 4, note) : text;
    let tokens = this.counter.text(fitted);
    for (let i = 0; i < 4 && tokens > budget; i++) {
      fitted = headTail(fitted, Math.floor((fitted.length * budget * 0.9) / tokens), note);
      tokens = this.counter.text(fitted);
    }
    return tokens <= budget ? { text: fitted, tokens } : undefined;
  }

  private key(scope: MemoryScope, callId: string): string {
    return `${scope.runId}\u0000${scope.scope}\u0000${callId}`;
  }

  /**
   * Appends a full output to its scope's log (`.harness/outputs/<scope>.txt`) under a header line and returns
   * where it stands. One append per output keeps a step cheap: creating a file per output costs far more
   * than writing it. A failed append is retried once with the directory re-created.
   */
  private save(invocation: ToolInvocation, scope: MemoryScope): SavedOutput {
    const path = `${OUTPUTS_DIR}/${safeName(scope.scope)}.txt`;
    const absolute = join(scope.workspace.root, path);
    const directory = dirname(absolute);
    const body = invocation.text.endsWith('\n') ? invocation.text : `${invocation.text}\n`;
    const block = `===== ${invocation.toolName} ${invocation.callId} =====\n${body}`;
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        if (!this.directories.has(directory)) {
          mkdirSync(directory, { recursive: true });
          this.directories.add(directory);
        }
        const before = this.logLines.get(absolute) ?? linesIn(existingText(absolute));
        appendFileSync(absolute, block, 'utf8');
        const lines = { start: before + 2, end: before + linesIn(block) };
        this.logLines.set(absolute, lines.end);
        const location = `${path} lines ${lines.start}-${lines.end}`;
        if (this.options.observationAging !== false) this.saved.set(this.key(scope, invocation.callId), location);
        return { path, lines, location };
      } catch {
        this.logLines.delete(absolute);
        if (!this.directories.delete(directory)) break;
      }
    }
    return { path, location: undefined };
  }
}
