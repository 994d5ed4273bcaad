/**
 * The model calls of one executor loop: the loop's own (fitted into the window by the memory layer, retried once
 * pruned after a context-length error) and those its tools make, all counted and observed like every call of the run.
 * @module
 */
import type {
  GenerateRequest,
  GenerateResult,
  LlmBackend,
  Message,
  Purpose,
  ToolSpec,
  Usage,
} from '../backend/types.js';
import { HarnessError } from '../errors.js';
import type { EventInput } from '../events.js';
import { callModel, reservedOutputTokens, type ModelCallContext } from '../llm/call-model.js';
import { isAged } from '../memory/aging.js';
import { isHistorySummary } from '../memory/summary-prompt.js';
import type { MemoryScope, PendingRequest } from '../memory/types.js';
import type { DataMark } from '../prompts/datamark.js';
import type { LoopProgress } from './loop-journal.js';
import type { LoopSettings } from './loop-start.js';
import { PrefixWatch } from './prefix-watch.js';
import type { ExecutorRunInput } from '../contracts/executor.js';

/** The system prompt and the task message are never summarised or pruned. */
const PROTECTED_COUNT = 2;

/** What the model calls use of their loop. */
export interface LoopModelHost {
  readonly settings: LoopSettings;
  readonly input: Pick<ExecutorRunInput, 'runId' | 'purpose' | 'scope'>;
  /** The backend of the loop's purpose. */
  readonly backend: LlmBackend;
  readonly mark: DataMark;
  readonly memoryScope: MemoryScope;
  /** Aborted when the loop stops. */
  readonly signal: AbortSignal;
  /** The loop's counters: every call of the loop adds its usage and request size here. */
  readonly progress: Pick<LoopProgress, 'usage' | 'peakRequestTokens'>;
  emit(event: EventInput): void;
  /** Settles as soon as the loop is stopped, even when the awaited work ignores the signal. */
  untilStopped<T>(work: Promise<T>): Promise<T>;
}

/** Makes the model calls of one loop. */
export class LoopModel {
  // Tokens of the request being sent, as sized for its llm-request event (exact near the window, else a bound).
  private lastRequestTokens = 0;
  // The last aged observation of the previous request: the end of the part an aging batch leaves cached.
  private agedEnd = -1;
  private readonly prefix: PrefixWatch;
  /** The loop's memory scope, with what the memory emits while fitting a request also told to the prefix watch. */
  private readonly fitScope: MemoryScope;

  constructor(private readonly host: LoopModelHost) {
    const { runId, purpose, scope } = host.input;
    this.prefix = new PrefixWatch({
      memory: host.settings.memory,
      backend: host.backend,
      runId,
      purpose,
      scope,
      emit: (event) => host.emit(event),
    });
    this.fitScope = {
      ...host.memoryScope,
      emit: (event) => {
        this.prefix.note(event);
        host.memoryScope.emit(event);
      },
    };
  }

  /**
   * Fits `dialogue` into the window and calls the loop's model with `tools`; after a "context length exceeded" the
   * dialogue is pruned and the call made once more.
   * @returns the reply and the dialogue as sent (the loop goes on from it)
   */
  async call(dialogue: Message[], tools: ToolSpec[]): Promise<{ dialogue: Message[]; result: GenerateResult }> {
    const { memory } = this.host.settings;
    const { signal } = this.host;
    let sent = await this.host.untilStopped(memory.fitRequest(this.pending(dialogue, tools), this.fitScope));
    try {
      return { dialogue: sent, result: await this.generate(sent, tools) };
    } catch (error) {
      if (!HarnessError.isInstance(error) || error.code !== 'context-length-exceeded' || signal.aborted) throw error;
      sent = memory.pruneAfterOverflow(this.pending(sent, tools), this.fitScope);
      try {
        return { dialogue: sent, result: await this.generate(sent, tools) };
      } catch (retryError) {
        if (HarnessError.isInstance(retryError) && retryError.code === 'context-length-exceeded' && !signal.aborted) {
          throw new HarnessError(
            'context-overflow',
            `The model still reported "context length exceeded" after the dialogue of ${this.host.input.scope} was pruned; ` +
              'use a backend with a larger context window or give tools smaller outputs.',
            { cause: retryError },
          );
        }
        throw retryError;
      }
    }
  }

  private async generate(messages: Message[], tools: ToolSpec[]): Promise<GenerateResult> {
    const { input, backend, progress } = this.host;
    this.prefix.sending(messages);
    const agedEnd = messages.findLastIndex(isAged);
    const cacheBreakpoints = stableEnds(messages, [this.agedEnd, agedEnd]);
    this.agedEnd = agedEnd;
    const result = await this.host.untilStopped(
      callModel(this.callContext(input.purpose, backend), { messages, tools, toolChoice: 'auto', cacheBreakpoints }),
    );
    progress.peakRequestTokens = Math.max(progress.peakRequestTokens, this.lastRequestTokens);
    addUsage(progress.usage, result.usage);
    return result;
  }

  /**
   * A tool's own model call (e.g. `analyze_image` asking the vision backend): fitted into that backend's window,
   * counted, observed with events and reported like every call of the run, under the tool's role as purpose.
   */
  async generateFor(
    role: 'vision' | 'summarize',
    request: Omit<GenerateRequest, 'purpose' | 'signal'>,
  ): Promise<GenerateResult> {
    const { settings } = this.host;
    const backend = settings.backendFor(role);
    const scope: MemoryScope = { ...this.host.memoryScope, purpose: role, backend };
    const maxOutputTokens = request.maxOutputTokens ?? this.reserveFor(backend);
    const marked = this.withRule(request.messages);
    const messages = await settings.memory.fitRequest(
      { messages: marked, tools: request.tools ?? [], protectedCount: marked.length, maxOutputTokens },
      scope,
    );
    return callModel(this.callContext(role, backend), { ...request, messages });
  }

  /** A tool's own request with the run's rule on untrusted data in its system prompt (one is added when it has none). */
  private withRule(messages: readonly Message[]): Message[] {
    const { mark } = this.host;
    const [first, ...rest] = messages;
    if (first?.role === 'system') return [{ role: 'system', content: mark.withRule(first.content) }, ...rest];
    return [{ role: 'system', content: mark.rule }, ...messages];
  }

  private callContext(purpose: Purpose, backend: LlmBackend): ModelCallContext {
    const { settings, input } = this.host;
    const { memory } = settings;
    // Whether this call's request was counted exactly (not bounded): only then may its usage calibrate the counts.
    let exact = true;
    return {
      backend,
      purpose,
      runId: input.runId,
      scope: input.scope,
      emit: (event) => this.host.emit(event),
      countTokens: (messages, tools) => {
        const size = memory.sizeRequest?.(messages, tools, backend) ?? {
          tokens: memory.countRequest(messages, tools, backend),
          exact: true,
        };
        exact = size.exact;
        this.lastRequestTokens = size.tokens;
        return size.tokens;
      },
      now: settings.now,
      signal: this.host.signal,
      sampling: settings.samplingFor(purpose),
      maxOutputTokens: this.reserveFor(backend),
      onUsage: (counted, usage, _used, call) => {
        const report = {
          runId: call.runId,
          purpose: call.purpose,
          scope: call.scope,
          emit: (event: EventInput) => this.host.emit(event),
        };
        if (exact) memory.observeUsage?.(backend, counted, usage, report);
      },
    };
  }

  private pending(messages: Message[], tools: ToolSpec[]): PendingRequest {
    return {
      messages,
      tools,
      protectedCount: PROTECTED_COUNT,
      maxOutputTokens: this.reserveFor(this.host.backend),
    };
  }

  /** The output reserve of a call to `backend`: the same number fits the request and goes out with it. */
  private reserveFor(backend: LlmBackend): number {
    return reservedOutputTokens(backend.contextWindow, this.host.settings.maxOutputTokens);
  }
}

/** Adds one call's usage to the loop's; a cache figure appears once a call reported it. */
function addUsage(total: Usage, call: Usage): void {
  total.inputTokens += call.inputTokens ?? 0;
  total.outputTokens += call.outputTokens ?? 0;
  if (call.cachedInputTokens !== undefined) {
    total.cachedInputTokens = (total.cachedInputTokens ?? 0) + call.cachedInputTokens;
  }
  if (call.cacheWriteInputTokens !== undefined) {
    total.cacheWriteInputTokens = (total.cacheWriteInputTokens ?? 0) + call.cacheWriteInputTokens;
  }
}

/**
 * The messages of a loop's request that end a stable part, where a provider that caches only marked prefixes should
 * mark them: the task message, the compression summary right after it when there is one, and the last aged
 * observation of this request and of the previous one (`agedEnds`). Aging rewrites the dialogue from its first newly
 * aged observation on: marking where the previous batch ended lets the request that ages a batch read everything
 * before it, and marking where this one ends caches the collapsed batch once for the requests after it.
 */
function stableEnds(messages: readonly Message[], agedEnds: readonly number[]): number[] {
  const ends = messages.length >= PROTECTED_COUNT ? [PROTECTED_COUNT - 1] : [];
  if (isHistorySummary(messages[PROTECTED_COUNT])) ends.push(PROTECTED_COUNT);
  for (const end of [...new Set(agedEnds)].sort((a, b) => a - b)) {
    const message = messages[end];
    if (end > (ends.at(-1) ?? -1) && message && isAged(message)) ends.push(end);
  }
  return ends;
}
