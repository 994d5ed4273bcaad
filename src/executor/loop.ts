/**
 * One executor loop: the ReAct cycle of model call, tool calls and observations, bounded by iterations, time and
 * an AbortSignal.
 * @module
 */
import type {
  ContentPart,
  GenerateRequest,
  GenerateResult,
  LlmBackend,
  Message,
  Purpose,
  ToolCall,
  ToolSpec,
  Usage,
} from '../backend/types.js';
import { HarnessError, toHarnessError } from '../errors.js';
import type { EmitEvent, EventInput } from '../events.js';
import { callModel, reservedOutputTokens, type ModelCallContext, type Sampling } from '../llm/call-model.js';
import type { ExecutionMemory, MemoryScope, PendingRequest } from '../memory/types.js';
import { DataMark } from '../prompts/datamark.js';
import {
  CONTINUE_AFTER_LENGTH,
  NUDGE_AFTER_EMPTY,
  SUBMIT_ANSWER_TOOL,
  renderExecutorTask,
  wrapToolOutput,
} from '../prompts/executor.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { ToolContext, ToolInvocation } from '../tools/types.js';
import { raceSignal } from '../util/race-signal.js';
import { parseSubmission, SUBMIT_SPEC } from './submission.js';
import type { ExecutorResult, ExecutorRunInput } from './types.js';

/** The system prompt and the task message are never summarised or pruned. */
const PROTECTED_COUNT = 2;
const MAX_TIMER_MS = 2_147_483_647;

type Stop = { status: 'aborted' | 'timeout'; error: HarnessError };

/** What every loop of one Executor shares. */
export interface LoopSettings {
  tools: ToolRegistry;
  memory: ExecutionMemory;
  emit: EmitEvent | undefined;
  backendFor: (role: Purpose | 'vision') => LlmBackend;
  systemPrompt: string;
  limits: LoopLimits;
  now: () => number;
  /** Sampling of a role's calls; undefined sends none. */
  samplingFor: (role: Purpose) => Sampling | undefined;
  /** Output tokens reserved for (and sent with) every call, at most a quarter of the called backend's window. */
  maxOutputTokens: number;
}

/** The loop limits after defaults. */
export interface LoopLimits {
  maxIterations: number;
  timeoutMs: number;
  toolTimeoutMs?: number | undefined;
  maxRepeatedInvalidCalls: number;
}

/**
 * One ReAct loop in a fresh dialogue; all per-loop state lives here. It never rejects for a model or tool failure:
 * every ending becomes an {@link ExecutorResult} that carries the files the loop's tools wrote, whatever way it ended.
 */
export class Loop {
  private readonly controller = new AbortController();
  private stop: Stop | undefined;
  private readonly cleanups: Array<() => void | Promise<void>> = [];
  private readonly usage: Usage = { inputTokens: 0, outputTokens: 0 };
  private iterations = 0;
  private peakRequestTokens = 0;
  // Tokens of the request being sent, as counted for its llm-request event.
  private lastRequestTokens = 0;
  private lastText = '';
  private readonly toolFiles: string[] = [];
  private readonly backend: LlmBackend;
  private readonly memoryScope: MemoryScope;
  private readonly toolContext: ToolContext;
  private readonly specs: ToolSpec[];
  private readonly mark: DataMark;
  private dialogue: Message[];

  constructor(
    private readonly settings: LoopSettings,
    private readonly input: ExecutorRunInput,
  ) {
    const { runId, purpose, scope, workspace } = input;
    this.mark = input.dataMark ?? DataMark.random();
    this.backend = this.settings.backendFor(purpose);
    const emit = (event: EventInput) => this.emit(event);
    this.memoryScope = {
      runId,
      purpose,
      scope,
      backend: this.backend,
      summarizer: this.settings.backendFor('summarize'),
      sampling: this.settings.samplingFor('summarize'),
      workspace,
      signal: this.controller.signal,
      emit,
      dataMark: this.mark,
    };
    const cleanups = this.cleanups;
    this.toolContext = {
      runId,
      purpose,
      scope,
      workspace,
      signal: this.controller.signal,
      backendFor: (role) => this.settings.backendFor(role),
      generate: (role, request) => this.generateFor(role, request),
      onScopeEnd: (cleanup) => {
        cleanups.push(cleanup);
      },
      scopeKey: {},
    };
    this.specs = [...this.settings.tools.specs(), SUBMIT_SPEC];
    this.dialogue = [
      { role: 'system', content: this.mark.withRule(this.settings.systemPrompt) },
      {
        role: 'user',
        content: renderExecutorTask({
          request: input.request,
          objective: input.objective,
          priorState: input.priorState,
        }),
      },
    ];
  }

  async run(): Promise<ExecutorResult> {
    const { signal } = this.input;
    const timeoutMs = Math.min(this.input.timeoutMs ?? this.settings.limits.timeoutMs, MAX_TIMER_MS);
    const onAbort = () =>
      this.halt(
        'aborted',
        new HarnessError('aborted', `The ${this.input.scope} loop was aborted by the caller.`, {
          cause: signal?.reason,
        }),
      );
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(
      () =>
        this.halt(
          'timeout',
          new HarnessError('timeout', `The ${this.input.scope} loop ran out of time after ${timeoutMs} ms.`),
        ),
      timeoutMs,
    );
    try {
      return await this.loop();
    } catch (error) {
      return this.finish(error);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      await this.runCleanups();
    }
  }

  private halt(status: Stop['status'], error: HarnessError): void {
    if (this.stop) return;
    this.stop = { status, error };
    this.controller.abort(error);
  }

  private async loop(): Promise<ExecutorResult> {
    const maxIterations = this.input.maxIterations ?? this.settings.limits.maxIterations;
    let invalidKey: string | undefined;
    let invalidCount = 0;
    let cutOff = '';

    for (;;) {
      this.throwIfStopped();
      if (this.iterations >= maxIterations) {
        throw new HarnessError(
          'budget-exhausted',
          `The ${this.input.scope} loop used its ${maxIterations} iteration(s) without submitting an answer.`,
        );
      }
      this.iterations += 1;
      const result = await this.callModel();
      const { content, toolCalls } = result.message;
      this.dialogue.push(
        toolCalls.length > 0
          ? { role: 'assistant', content, toolCalls: [...toolCalls] }
          : { role: 'assistant', content },
      );
      if (content.trim() !== '') this.lastText = cutOff + content;

      if (toolCalls.length === 0) {
        if (result.finishReason === 'length') {
          cutOff += content;
          this.dialogue.push({ role: 'user', content: CONTINUE_AFTER_LENGTH });
          continue;
        }
        if (content.trim() === '' && cutOff === '') {
          invalidCount = invalidKey === '' ? invalidCount + 1 : 1;
          invalidKey = '';
          if (invalidCount >= this.settings.limits.maxRepeatedInvalidCalls) {
            throw new HarnessError(
              'malformed-reply',
              `The model sent ${invalidCount} empty replies in a row in ${this.input.scope}; stopping this loop instead of spending its budget.`,
            );
          }
          this.dialogue.push({ role: 'user', content: NUDGE_AFTER_EMPTY });
          continue;
        }
        return this.result('completed', cutOff + content, this.toolFiles);
      }
      cutOff = '';

      const { invocations, submitted } = await this.runTools(toolCalls);
      for (const invocation of invocations) {
        const key = `${invocation.toolName}\u0000${invocation.arguments}`;
        if (!invocation.result.isError) {
          invalidKey = undefined;
          invalidCount = 0;
          continue;
        }
        invalidCount = key === invalidKey ? invalidCount + 1 : 1;
        invalidKey = key;
        if (invalidCount >= this.settings.limits.maxRepeatedInvalidCalls) {
          throw new HarnessError(
            'malformed-reply',
            `The model repeated the same invalid call to "${invocation.toolName}" ${invalidCount} times in a row in ` +
              `${this.input.scope} (last error: ${firstLine(invocation.result.text)}); stopping this loop instead of spending its budget.`,
          );
        }
      }
      // A submission names the files that matter; what the loop's tools wrote stays part of the result too.
      if (submitted) return this.result('completed', submitted.answer, [...this.toolFiles, ...submitted.files]);
    }
  }

  private async callModel(): Promise<GenerateResult> {
    const { memory } = this.settings;
    this.dialogue = await this.untilStopped(memory.fitRequest(this.pending(), this.memoryScope));
    try {
      return await this.generate();
    } catch (error) {
      if (!HarnessError.isInstance(error) || error.code !== 'context-length-exceeded' || this.stop) throw error;
      this.dialogue = memory.pruneAfterOverflow(this.pending(), this.memoryScope);
      try {
        return await this.generate();
      } catch (retryError) {
        if (HarnessError.isInstance(retryError) && retryError.code === 'context-length-exceeded' && !this.stop) {
          throw new HarnessError(
            'context-overflow',
            `The model still reported "context length exceeded" after the dialogue of ${this.input.scope} was pruned; ` +
              'use a backend with a larger context window or give tools smaller outputs.',
            { cause: retryError },
          );
        }
        throw retryError;
      }
    }
  }

  private async generate(): Promise<GenerateResult> {
    const { purpose } = this.input;
    const result = await this.untilStopped(
      callModel(this.callContext(purpose, this.backend, this.input.scope), {
        messages: this.dialogue,
        tools: this.specs,
        toolChoice: 'auto',
      }),
    );
    this.peakRequestTokens = Math.max(this.peakRequestTokens, this.lastRequestTokens);
    this.addUsage(result.usage);
    return result;
  }

  /**
   * A tool's own model call (e.g. `analyze_image` asking the vision backend): fitted into that backend's window,
   * counted, observed with events and reported like every call of the run, under the tool's role as purpose.
   */
  private async generateFor(
    role: 'vision' | 'summarize',
    request: Omit<GenerateRequest, 'purpose' | 'signal'>,
  ): Promise<GenerateResult> {
    const backend = this.settings.backendFor(role);
    const scope: MemoryScope = { ...this.memoryScope, purpose: role, backend };
    const maxOutputTokens = request.maxOutputTokens ?? this.reserveFor(backend);
    const marked = this.withRule(request.messages);
    const messages = await this.settings.memory.fitRequest(
      { messages: marked, tools: request.tools ?? [], protectedCount: marked.length, maxOutputTokens },
      scope,
    );
    return callModel(this.callContext(role, backend, this.input.scope), { ...request, messages });
  }

  /** A tool's own request with the run's rule on untrusted data in its system prompt (one is added when it has none). */
  private withRule(messages: readonly Message[]): Message[] {
    const [first, ...rest] = messages;
    if (first?.role === 'system') return [{ role: 'system', content: this.mark.withRule(first.content) }, ...rest];
    return [{ role: 'system', content: this.mark.rule }, ...messages];
  }

  private callContext(purpose: Purpose, backend: LlmBackend, scope: string): ModelCallContext {
    const { memory } = this.settings;
    return {
      backend,
      purpose,
      runId: this.input.runId,
      scope,
      emit: (event) => this.emit(event),
      countTokens: (messages, tools) => {
        this.lastRequestTokens = memory.countRequest(messages, tools, backend);
        return this.lastRequestTokens;
      },
      now: this.settings.now,
      signal: this.controller.signal,
      sampling: this.settings.samplingFor(purpose),
      maxOutputTokens: this.reserveFor(backend),
      onUsage: (counted, usage) => memory.observeUsage?.(backend, counted, usage),
    };
  }

  private async runTools(calls: readonly ToolCall[]): Promise<{
    invocations: Array<{ toolName: string; arguments: string; result: ToolInvocation }>;
    submitted: { answer: string; files: string[] } | undefined;
  }> {
    const { runId, purpose, scope, workspace } = this.input;
    for (const call of calls) {
      this.emit({
        type: 'tool-call',
        runId,
        purpose,
        scope,
        callId: call.id,
        toolName: call.name,
        arguments: call.arguments,
      });
    }
    const invokeOptions = {
      alsoAvailable: [SUBMIT_ANSWER_TOOL],
      ...(this.settings.limits.toolTimeoutMs === undefined ? {} : { timeoutMs: this.settings.limits.toolTimeoutMs }),
    };
    // Other tools run first, so an answer submitted alongside them can refer to what they produced.
    const others = await this.untilStopped(
      Promise.all(
        calls.map((call) =>
          call.name === SUBMIT_ANSWER_TOOL
            ? undefined
            : this.settings.tools.invoke(call, this.toolContext, invokeOptions),
        ),
      ),
    );
    let submitted: { answer: string; files: string[] } | undefined;
    const results = calls.map((call, index): ToolInvocation => {
      const done = others[index];
      if (done) return done;
      const base = { callId: call.id, toolName: call.name, images: [], observation: 'text' as const, durationMs: 0 };
      if (submitted)
        return { ...base, text: 'Ignored: an answer was already submitted in this reply.', files: [], isError: false };
      const submission = parseSubmission(call.arguments, workspace.root);
      if (!submission.ok) return { ...base, text: submission.error, files: [], isError: true };
      submitted = submission.value;
      return { ...base, text: 'Answer submitted.', files: submission.value.files, isError: false };
    });

    for (const result of results) {
      if (!result.isError)
        for (const file of result.files) if (!this.toolFiles.includes(file)) this.toolFiles.push(file);
      this.emit({
        type: 'tool-result',
        runId,
        purpose,
        scope,
        callId: result.callId,
        toolName: result.toolName,
        isError: result.isError,
        durationMs: result.durationMs,
        outputChars: result.text.length,
        files: result.files,
      });
    }
    const observations = await this.untilStopped(
      Promise.all(results.map((result) => this.settings.memory.boundObservation(result, this.memoryScope))),
    );
    results.forEach((result, index) => {
      const text = wrapToolOutput(this.mark, result.toolName, observations[index] ?? '', result.isError);
      const content: string | ContentPart[] =
        result.images.length > 0 ? [{ type: 'text', text }, ...result.images] : text;
      this.dialogue.push({
        role: 'tool',
        toolCallId: result.callId,
        toolName: result.toolName,
        content,
        ...(result.isError ? { isError: true } : {}),
      });
    });
    this.throwIfStopped();
    return {
      invocations: results.map((result, index) => ({
        toolName: result.toolName,
        arguments: calls[index]?.arguments ?? '',
        result,
      })),
      submitted,
    };
  }

  private pending(): PendingRequest {
    return {
      messages: this.dialogue,
      tools: this.specs,
      protectedCount: PROTECTED_COUNT,
      maxOutputTokens: this.reserveFor(this.backend),
    };
  }

  /** The output reserve of a call to `backend`: the same number fits the request and goes out with it. */
  private reserveFor(backend: LlmBackend): number {
    return reservedOutputTokens(backend.contextWindow, this.settings.maxOutputTokens);
  }

  private addUsage(usage: Usage): void {
    this.usage.inputTokens += usage.inputTokens ?? 0;
    this.usage.outputTokens += usage.outputTokens ?? 0;
    if (usage.cachedInputTokens !== undefined) {
      this.usage.cachedInputTokens = (this.usage.cachedInputTokens ?? 0) + usage.cachedInputTokens;
    }
  }

  private throwIfStopped(): void {
    if (this.stop) throw this.stop.error;
  }

  /** Settles as soon as the loop is stopped, even when the awaited work ignores the signal. */
  private untilStopped<T>(work: Promise<T>): Promise<T> {
    if (this.stop) {
      work.catch(() => undefined);
      return Promise.reject(this.stop.error);
    }
    const signal = this.controller.signal;
    return raceSignal(work, signal, () => this.stop?.error ?? toHarnessError(signal.reason));
  }

  private finish(error: unknown): ExecutorResult {
    if (this.stop) return this.result(this.stop.status, this.lastText, this.toolFiles, this.stop.error);
    return this.result('failed', this.lastText, this.toolFiles, toHarnessError(error));
  }

  private result(
    status: ExecutorResult['status'],
    answer: string,
    files: readonly string[],
    error?: HarnessError,
  ): ExecutorResult {
    return {
      status,
      answer,
      files: [...new Set(files)],
      iterations: this.iterations,
      usage: { ...this.usage },
      peakRequestTokens: this.peakRequestTokens,
      ...(error ? { error: { code: error.code, message: error.message } } : {}),
    };
  }

  private emit(event: EventInput): void {
    const emit = this.settings.emit;
    if (!emit) return;
    try {
      emit(event);
    } catch {
      // An event consumer must never break a loop.
    }
  }

  private async runCleanups(): Promise<void> {
    // Last registered, first cleaned: later resources may depend on earlier ones.
    for (const cleanup of this.cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch {
        // A failing cleanup must not change the loop's result.
      }
    }
  }
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
