import { z } from 'zod';
import { BackendPricingSchema } from '../backend/pricing.js';
import type {
  BackendPricing,
  GenerateRequest,
  GenerateResult,
  LlmBackend,
  Message,
  Purpose,
  StreamPart,
} from '../backend/types.js';
import { HarnessError } from '../errors.js';
import { raceSignal } from '../util/race-signal.js';

/** One scripted answer: a result, an error to throw, or a function of the request. */
export type ScriptStep =
  | GenerateResult
  | Error
  | ((request: GenerateRequest) => GenerateResult | Promise<GenerateResult>);

/**
 * What a {@link ScriptedBackend} plays: one list for every call, one list per purpose,
 * or a function of the request and its 0-based call index.
 */
export type Script =
  | ScriptStep[]
  | Partial<Record<Purpose, ScriptStep[]>>
  | ((request: GenerateRequest, index: number) => GenerateResult | Promise<GenerateResult>);

const ScriptedBackendOptionsSchema = z.object({
  contextWindow: z.number().int().positive().default(128_000),
  modelId: z.string().min(1).default('scripted'),
  provider: z.string().min(1).default('scripted'),
  usage: z.enum(['estimate', 'zero']).default('estimate'),
  /** Like the shipped adapters' `stream` option: `true` makes the harness call `stream()` and emit delta events. */
  stream: z.boolean().default(false),
  /** Reported as `backend.pricing`, like the shipped adapters' `pricing` option. */
  pricing: BackendPricingSchema.optional(),
});

/** Options of {@link ScriptedBackend}. */
export type ScriptedBackendOptions = z.input<typeof ScriptedBackendOptionsSchema>;

const UNKEYED = 'any purpose';

/**
 * A backend for tests that plays a script instead of calling a model. It records every request,
 * fails loudly on a call the script does not cover, and `assertComplete()` checks that every step was used.
 *
 * @example
 * ```ts
 * const backend = new ScriptedBackend({ plan: [planOf('a', 'b')], execute: [submit('done')] });
 * // … run the harness …
 * backend.assertComplete();
 * ```
 */
export class ScriptedBackend implements LlmBackend {
  readonly provider: string;
  readonly modelId: string;
  readonly contextWindow: number;
  /** Whether the harness calls this backend through `stream()` (the `stream` option). */
  readonly streaming: boolean;
  /** The prices of its calls (the `pricing` option). */
  readonly pricing?: BackendPricing;
  /** Every request received, in order (messages copied at call time). */
  readonly calls: GenerateRequest[] = [];

  private readonly script: Script;
  private readonly usageMode: 'estimate' | 'zero';
  private readonly used = new Map<string, number>();

  constructor(script: Script, options: ScriptedBackendOptions = {}) {
    const parsed = ScriptedBackendOptionsSchema.safeParse(options);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new HarnessError(
        'invalid-options',
        `Invalid ScriptedBackend option "${issue?.path.join('.') ?? '?'}": ${issue?.message ?? 'invalid'}. ` +
          'contextWindow must be a positive integer, modelId/provider non-empty strings, usage "estimate" or "zero", stream a boolean, ' +
          'pricing { currency, inputPerMTok, outputPerMTok, cachedInputPerMTok?, cacheWritePerMTok? } with prices ≥ 0.',
      );
    }
    if (script === null || (typeof script !== 'object' && typeof script !== 'function')) {
      throw new HarnessError(
        'invalid-options',
        'ScriptedBackend needs a script: an array of steps, an object of steps per purpose, or a function.',
      );
    }
    this.script = script;
    this.provider = parsed.data.provider;
    this.modelId = parsed.data.modelId;
    this.contextWindow = parsed.data.contextWindow;
    this.usageMode = parsed.data.usage;
    this.streaming = parsed.data.stream;
    this.pricing = parsed.data.pricing;
  }

  /** The recorded requests of one purpose. */
  callsFor(purpose: Purpose): GenerateRequest[] {
    return this.calls.filter((call) => call.purpose === purpose);
  }

  /** Throws when some scripted steps were never used, listing how many per purpose. */
  assertComplete(): void {
    if (typeof this.script === 'function') return;
    const unused: string[] = [];
    for (const [key, steps] of this.scriptLists()) {
      const left = steps.length - (this.used.get(key) ?? 0);
      if (left > 0) unused.push(`${key}: ${left} of ${steps.length} unused`);
    }
    if (unused.length > 0) {
      throw new HarnessError(
        'unscripted-call',
        `ScriptedBackend finished with unused steps (${unused.join('; ')}). ` +
          `It received ${this.calls.length} call(s); remove the extra steps or check why the calls did not happen.`,
      );
    }
  }

  /** Plays the next step for this request's purpose. */
  async generate(request: GenerateRequest): Promise<GenerateResult> {
    throwIfAborted(request.signal);
    const index = this.calls.length;
    this.calls.push(recordRequest(request));
    const produced = this.produce(request, index);
    const result = await raceSignal(Promise.resolve(produced), request.signal, () => abortError(request.signal!));
    return this.withUsage(request.messages, result);
  }

  /** Plays the next step as a stream: reasoning, text and tool-call deltas, then `finish`. */
  async *stream(request: GenerateRequest): AsyncIterable<StreamPart> {
    const result = await this.generate(request);
    const { message } = result;
    if (message.reasoning) yield { type: 'reasoning-delta', text: message.reasoning };
    for (const piece of halves(message.content)) yield { type: 'text-delta', text: piece };
    for (const call of message.toolCalls) {
      const [first, second] = halves(call.arguments);
      yield { type: 'tool-call-delta', id: call.id, name: call.name, argumentsDelta: first ?? '' };
      if (second !== undefined) yield { type: 'tool-call-delta', id: call.id, argumentsDelta: second };
    }
    yield { type: 'finish', result };
  }

  private produce(request: GenerateRequest, index: number): GenerateResult | Promise<GenerateResult> {
    const script = this.script;
    if (typeof script === 'function') return script(request, index);
    const key = Array.isArray(script) ? UNKEYED : (request.purpose ?? 'unset');
    const steps = Array.isArray(script) ? script : request.purpose ? script[request.purpose] : undefined;
    const position = this.used.get(key) ?? 0;
    const step = steps?.[position];
    if (step === undefined) throw this.unscripted(key, position);
    this.used.set(key, position + 1);
    if (step instanceof Error) throw step;
    if (typeof step === 'function') return step(request);
    return step;
  }

  private unscripted(key: string, position: number): HarnessError {
    const holds = this.scriptLists()
      .map(([name, steps]) => `${name} (${steps.length})`)
      .join(', ');
    const which = key === UNKEYED ? `call #${position + 1}` : `"${key}" call #${position + 1}`;
    return new HarnessError(
      'unscripted-call',
      `ScriptedBackend received an unscripted ${which} (index ${position}); the script holds steps for: ${holds || 'nothing'}. ` +
        'Add a step for this call or find out why the code made it.',
    );
  }

  private scriptLists(): Array<[string, ScriptStep[]]> {
    const script = this.script;
    if (typeof script === 'function') return [];
    if (Array.isArray(script)) return [[UNKEYED, script]];
    return Object.entries(script).filter((entry): entry is [string, ScriptStep[]] => Array.isArray(entry[1]));
  }

  private withUsage(messages: readonly Message[], result: GenerateResult): GenerateResult {
    const copy: GenerateResult = {
      ...result,
      message: { ...result.message, toolCalls: [...(result.message.toolCalls ?? [])] },
      usage: { ...result.usage },
    };
    if (this.usageMode === 'estimate' && copy.usage.inputTokens === 0 && copy.usage.outputTokens === 0) {
      const output =
        copy.message.content.length +
        copy.message.toolCalls.reduce((n, c) => n + c.name.length + c.arguments.length, 0);
      copy.usage = { inputTokens: Math.ceil(messagesChars(messages) / 4), outputTokens: Math.ceil(output / 4) };
    }
    return copy;
  }
}

function recordRequest(request: GenerateRequest): GenerateRequest {
  // Functions and signals cannot be cloned: they are kept by reference.
  const { signal, onRetry, ...data } = request;
  const copy = structuredClone(data) as GenerateRequest;
  if (signal) copy.signal = signal;
  if (onRetry) copy.onRetry = onRetry;
  return copy;
}

function messagesChars(messages: readonly Message[]): number {
  let chars = 0;
  for (const message of messages) {
    if (typeof message.content === 'string') chars += message.content.length;
    else for (const part of message.content) chars += part.type === 'text' ? part.text.length : 1_000;
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) chars += call.arguments.length;
  }
  return chars;
}

function halves(text: string): string[] {
  if (text.length === 0) return [];
  const middle = Math.ceil(text.length / 2);
  return middle === text.length ? [text] : [text.slice(0, middle), text.slice(middle)];
}

function abortError(signal: AbortSignal): HarnessError {
  const reason: unknown = signal.reason;
  if (HarnessError.isInstance(reason)) return reason;
  return new HarnessError('aborted', 'The scripted call was aborted.', { cause: reason });
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortError(signal);
}
