import { z } from 'zod';
import type {
  ContentPart,
  GenerateResult,
  LlmBackend,
  Message,
  Purpose,
  ToolCall,
  ToolSpec,
  Usage,
} from '../backend/types.js';
import { DEFAULTS } from '../defaults.js';
import { HarnessError, toHarnessError } from '../errors.js';
import type { EmitEvent, EventInput } from '../events.js';
import { MemoryManager } from '../memory/memory-manager.js';
import { EXECUTION_MEMORY_SHAPE, isExecutionMemory, type ExecutionMemory, type MemoryScope, type PendingRequest } from '../memory/types.js';
import {
  CONTINUE_AFTER_LENGTH,
  EXECUTOR_SYSTEM_PROMPT,
  NUDGE_AFTER_EMPTY,
  SUBMIT_ANSWER_TOOL,
  renderExecutorTask,
  wrapToolOutput,
} from '../prompts/executor.js';
import { ToolRegistry, toWorkspaceRelative } from '../tools/registry.js';
import type { ToolContext, ToolInvocation } from '../tools/types.js';
import { raceSignal } from '../util/race-signal.js';
import type { ExecutorResult, ExecutorRunInput } from './types.js';

const MAX_TIMER_MS = 2_147_483_647;
/** The system prompt and the task message are never summarised or pruned. */
const PROTECTED_COUNT = 2;

const LimitsSchema = z
  .object({
    /** @defaultValue DEFAULTS.maxIterations (200) */
    maxIterations: z.number().int().positive().default(DEFAULTS.maxIterations),
    /** @defaultValue DEFAULTS.timeoutMs (7 200 000) */
    timeoutMs: z.number().int().positive().max(MAX_TIMER_MS).default(DEFAULTS.timeoutMs),
    /** Timeout of tools without their own; the registry's default applies when absent. */
    toolTimeoutMs: z.number().int().positive().max(MAX_TIMER_MS).optional(),
    /** @defaultValue DEFAULTS.maxRepeatedInvalidCalls (3) */
    maxRepeatedInvalidCalls: z.number().int().min(1).default(DEFAULTS.maxRepeatedInvalidCalls),
  })
  .prefault({});

const OptionsSchema = z.object({
  backend: z.custom<LlmBackend>((value) => isBackend(value), 'must be an LlmBackend (an object with generate())'),
  tools: z.custom<ToolRegistry>(
    (value) => typeof value === 'object' && value !== null && typeof (value as ToolRegistry).invoke === 'function',
    'must be a ToolRegistry',
  ),
  memory: z.custom<ExecutionMemory>(isExecutionMemory, `must implement ${EXECUTION_MEMORY_SHAPE}`).optional(),
  emit: z.custom<EmitEvent>((value) => typeof value === 'function', 'must be a function').optional(),
  backendFor: z
    .custom<(role: Purpose | 'vision') => LlmBackend>((value) => typeof value === 'function', 'must be a function')
    .optional(),
  systemPrompt: z.string().trim().min(1, 'must be a non-empty string').optional(),
  limits: LimitsSchema,
  now: z.custom<() => number>((value) => typeof value === 'function', 'must be a function').optional(),
});

/** Options of {@link Executor}. */
export interface ExecutorOptions {
  backend: LlmBackend;
  tools: ToolRegistry;
  /** Keeps every request inside the window. @defaultValue `new MemoryManager()` (the paper's defaults) */
  memory?: ExecutionMemory;
  /** Receives `llm-request`, `llm-response`, `tool-call` and `tool-result` events. */
  emit?: EmitEvent;
  /** The backend of a role; the loop calls `backendFor(purpose)`. @defaultValue `() => backend` */
  backendFor?: (role: Purpose | 'vision') => LlmBackend;
  /** @defaultValue EXECUTOR_SYSTEM_PROMPT */
  systemPrompt?: string;
  limits?: z.input<typeof LimitsSchema>;
  now?: () => number;
}

const RunInputSchema = z.object({
  runId: z.string().min(1),
  purpose: z.enum(['execute', 'synthesize', 'repair']),
  scope: z.string().min(1),
  request: z.string(),
  objective: z.string(),
  priorState: z.string().optional(),
  maxIterations: z.number().int().min(0).optional(),
  timeoutMs: z.number().int().min(0).optional(),
});

const SubmitSchema = z.object({
  answer: z.string().describe('The complete answer to the objective.'),
  files: z
    .array(z.string())
    .default([])
    .describe('Workspace-relative paths of the files that are part of the answer.'),
});

const SUBMIT_SPEC: ToolSpec = (() => {
  const inputSchema = z.toJSONSchema(SubmitSchema, { io: 'input' }) as Record<string, unknown>;
  delete inputSchema.$schema;
  return {
    name: SUBMIT_ANSWER_TOOL,
    description: 'Ends your work: submits the final answer and the workspace-relative paths of the files you produced.',
    inputSchema,
  };
})();

type Stop = { status: 'aborted' | 'timeout'; error: HarnessError };

/**
 * Runs one ReAct loop in a fresh dialogue: the model calls tools until it calls `submit_answer`
 * or replies with text only. Every request passes through the execution memory first; the loop is
 * bounded by iterations, a timeout and an `AbortSignal`, and never rejects for a model or tool failure.
 *
 * @example
 * ```ts
 * const executor = new Executor({ backend, tools: new ToolRegistry([add]) });
 * const result = await executor.run({
 *   runId: 'r1', purpose: 'execute', scope: 'subtask-1', workspace,
 *   request: 'What is 2 + 3?', objective: 'Compute 2 + 3 with the add tool.',
 * });
 * result.status; // 'completed'
 * ```
 */
export class Executor {
  private readonly settings: LoopSettings;

  constructor(options: ExecutorOptions) {
    const parsed = OptionsSchema.safeParse(options ?? {});
    if (!parsed.success) throw optionsError(parsed.error);
    const data = parsed.data;
    this.settings = {
      tools: data.tools,
      memory: data.memory ?? new MemoryManager(),
      emit: data.emit,
      backendFor: data.backendFor ?? (() => data.backend),
      systemPrompt: data.systemPrompt ?? EXECUTOR_SYSTEM_PROMPT,
      limits: data.limits,
      now: data.now ?? Date.now,
    };
  }

  /** Runs one loop to its end; resolves with a result for every outcome (invalid input throws `invalid-input`). */
  async run(input: ExecutorRunInput): Promise<ExecutorResult> {
    const checked = RunInputSchema.safeParse(input ?? {});
    if (!checked.success) {
      const issue = checked.error.issues[0];
      throw new HarnessError(
        'invalid-input',
        `Invalid executor input "${issue?.path.join('.') ?? '?'}": ${issue?.message ?? 'invalid'}. ` +
          'runId and scope must be non-empty strings, purpose one of execute/synthesize/repair, ' +
          'maxIterations and timeoutMs non-negative integers.',
      );
    }
    if (typeof input.workspace?.root !== 'string') {
      throw new HarnessError('invalid-input', 'Invalid executor input "workspace": pass a Workspace (e.g. LocalWorkspace).');
    }
    return new Loop(this.settings, input).run();
  }
}

interface LoopSettings {
  tools: ToolRegistry;
  memory: ExecutionMemory;
  emit: EmitEvent | undefined;
  backendFor: (role: Purpose | 'vision') => LlmBackend;
  systemPrompt: string;
  limits: z.output<typeof LimitsSchema>;
  now: () => number;
}

class Loop {
  private readonly controller = new AbortController();
  private stop: Stop | undefined;
  private readonly cleanups: Array<() => void | Promise<void>> = [];
  private readonly usage: Usage = { inputTokens: 0, outputTokens: 0 };
  private iterations = 0;
  private peakRequestTokens = 0;
  private lastText = '';
  private readonly toolFiles: string[] = [];
  private readonly backend: LlmBackend;
  private readonly memoryScope: MemoryScope;
  private readonly toolContext: ToolContext;
  private readonly specs: ToolSpec[];
  private dialogue: Message[];

  constructor(
    private readonly settings: LoopSettings,
    private readonly input: ExecutorRunInput,
  ) {
    const { runId, purpose, scope, workspace } = input;
    this.backend = this.settings.backendFor(purpose);
    const emit = (event: EventInput) => this.emit(event);
    this.memoryScope = {
      runId,
      purpose,
      scope,
      backend: this.backend,
      summarizer: this.settings.backendFor('summarize'),
      workspace,
      signal: this.controller.signal,
      emit,
    };
    const cleanups = this.cleanups;
    this.toolContext = {
      runId,
      purpose,
      scope,
      workspace,
      signal: this.controller.signal,
      backendFor: (role) => this.settings.backendFor(role),
      onScopeEnd: (cleanup) => {
        cleanups.push(cleanup);
      },
    };
    this.specs = [...this.settings.tools.specs(), SUBMIT_SPEC];
    this.dialogue = [
      { role: 'system', content: this.settings.systemPrompt },
      {
        role: 'user',
        content: renderExecutorTask({ request: input.request, objective: input.objective, priorState: input.priorState }),
      },
    ];
  }

  async run(): Promise<ExecutorResult> {
    const { signal } = this.input;
    const timeoutMs = Math.min(this.input.timeoutMs ?? this.settings.limits.timeoutMs, MAX_TIMER_MS);
    const onAbort = () =>
      this.halt('aborted', new HarnessError('aborted', `The ${this.input.scope} loop was aborted by the caller.`, { cause: signal?.reason }));
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(
      () => this.halt('timeout', new HarnessError('timeout', `The ${this.input.scope} loop ran out of time after ${timeoutMs} ms.`)),
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
        toolCalls.length > 0 ? { role: 'assistant', content, toolCalls: [...toolCalls] } : { role: 'assistant', content },
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
        return this.result('completed', cutOff + content, []);
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
      if (submitted) return this.result('completed', submitted.answer, submitted.files);
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
    const { runId, purpose, scope } = this.input;
    const messages = this.dialogue;
    const requestTokens = this.settings.memory.countRequest(messages, this.specs);
    this.peakRequestTokens = Math.max(this.peakRequestTokens, requestTokens);
    this.emit({
      type: 'llm-request',
      runId,
      purpose,
      scope,
      provider: this.backend.provider,
      modelId: this.backend.modelId,
      messages: messages.length,
      requestTokens,
    });
    const started = this.settings.now();
    const result = await this.untilStopped(
      this.backend.generate({
        messages: [...messages],
        tools: this.specs,
        toolChoice: 'auto',
        purpose,
        signal: this.controller.signal,
      }),
    );
    const toolCalls = Array.isArray(result?.message?.toolCalls) ? result.message.toolCalls : [];
    const normalized: GenerateResult = {
      ...result,
      message: { ...result.message, content: result.message?.content ?? '', toolCalls },
      usage: result.usage ?? { inputTokens: 0, outputTokens: 0 },
    };
    this.addUsage(normalized.usage);
    this.emit({
      type: 'llm-response',
      runId,
      purpose,
      scope,
      finishReason: normalized.finishReason,
      usage: normalized.usage,
      toolCalls: toolCalls.length,
      durationMs: this.settings.now() - started,
    });
    return normalized;
  }

  private async runTools(calls: readonly ToolCall[]): Promise<{
    invocations: Array<{ toolName: string; arguments: string; result: ToolInvocation }>;
    submitted: { answer: string; files: string[] } | undefined;
  }> {
    const { runId, purpose, scope, workspace } = this.input;
    for (const call of calls) {
      this.emit({ type: 'tool-call', runId, purpose, scope, callId: call.id, toolName: call.name, arguments: call.arguments });
    }
    const invokeOptions = {
      alsoAvailable: [SUBMIT_ANSWER_TOOL],
      ...(this.settings.limits.toolTimeoutMs === undefined ? {} : { timeoutMs: this.settings.limits.toolTimeoutMs }),
    };
    // Other tools run first, so an answer submitted alongside them can refer to what they produced.
    const others = await this.untilStopped(
      Promise.all(
        calls.map((call) =>
          call.name === SUBMIT_ANSWER_TOOL ? undefined : this.settings.tools.invoke(call, this.toolContext, invokeOptions),
        ),
      ),
    );
    let submitted: { answer: string; files: string[] } | undefined;
    const results = calls.map((call, index): ToolInvocation => {
      const done = others[index];
      if (done) return done;
      const base = { callId: call.id, toolName: call.name, images: [], observation: 'text' as const, durationMs: 0 };
      if (submitted) return { ...base, text: 'Ignored: an answer was already submitted in this reply.', files: [], isError: false };
      const submission = parseSubmission(call.arguments, workspace.root);
      if (!submission.ok) return { ...base, text: submission.error, files: [], isError: true };
      submitted = submission.value;
      return { ...base, text: 'Answer submitted.', files: submission.value.files, isError: false };
    });

    for (const result of results) {
      if (!result.isError) for (const file of result.files) if (!this.toolFiles.includes(file)) this.toolFiles.push(file);
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
      const text = wrapToolOutput(result.toolName, observations[index] ?? '', result.isError);
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
    return { messages: this.dialogue, tools: this.specs, protectedCount: PROTECTED_COUNT };
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
      files: [...files],
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

type Submission = { ok: true; value: { answer: string; files: string[] } } | { ok: false; error: string };

function parseSubmission(raw: string, root: string): Submission {
  let value: unknown;
  try {
    value = raw.trim() === '' ? {} : JSON.parse(raw);
  } catch (error) {
    return {
      ok: false,
      error: `Invalid arguments for tool "${SUBMIT_ANSWER_TOOL}": they are not valid JSON (${error instanceof Error ? error.message : String(error)}). Send { "answer": string, "files": string[] }.`,
    };
  }
  const parsed = SubmitSchema.safeParse(value);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((issue) => `- ${issue.path.join('.') || '(the whole input)'}: ${issue.message}`);
    return {
      ok: false,
      error: `Invalid arguments for tool "${SUBMIT_ANSWER_TOOL}":\n${fields.join('\n')}\nSend { "answer": string, "files": string[] }.`,
    };
  }
  const files: string[] = [];
  const outside: string[] = [];
  for (const file of parsed.data.files) {
    const relative = toWorkspaceRelative(file, root);
    if (relative === undefined) outside.push(file);
    else if (!files.includes(relative)) files.push(relative);
  }
  if (outside.length > 0) {
    return {
      ok: false,
      error: `Invalid arguments for tool "${SUBMIT_ANSWER_TOOL}": files must be workspace-relative paths inside the workspace; these are not: ${outside.join(', ')}.`,
    };
  }
  return { ok: true, value: { answer: parsed.data.answer, files } };
}

function isBackend(value: unknown): value is LlmBackend {
  return typeof value === 'object' && value !== null && typeof (value as LlmBackend).generate === 'function';
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

function optionsError(error: z.ZodError): HarnessError {
  const issue = error.issues[0];
  const name = issue?.path.join('.') || 'options';
  const ranges: Record<string, string> = {
    'limits.maxIterations': 'a positive integer',
    'limits.timeoutMs': `a positive integer of milliseconds up to ${MAX_TIMER_MS}`,
    'limits.toolTimeoutMs': `a positive integer of milliseconds up to ${MAX_TIMER_MS}`,
    'limits.maxRepeatedInvalidCalls': 'an integer of at least 1',
  };
  const range = ranges[name];
  return new HarnessError(
    'invalid-options',
    `Invalid Executor option "${name}": ${issue?.message ?? 'invalid'}${range ? `; allowed: ${range}` : ''}.`,
  );
}
