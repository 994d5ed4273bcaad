/**
 * `aiSdkBackend()`: an {@link LlmBackend} over an AI SDK language model (`LanguageModelV3` or `LanguageModelV2`).
 * @module
 */
import type { InspectOptions } from 'node:util';
import type {
  LanguageModelV2,
  LanguageModelV2CallOptions,
  LanguageModelV3,
  LanguageModelV3CallOptions,
  SharedV3ProviderOptions,
} from '@ai-sdk/provider';
import type { ErrorContext } from '../backend/http-errors.js';
import { parseOptions, retrySettings } from '../backend/options.js';
import { withRetry, type RetrySettings } from '../backend/retry.js';
import type { BackendPricing, GenerateRequest, GenerateResult, LlmBackend, StreamPart } from '../backend/types.js';
import { HarnessError } from '../errors.js';
import { Redactor } from '../util/redact.js';
import { resultOf, streamParts } from './answer.js';
import { aiSdkError } from './errors.js';
import { AiSdkBackendOptionsSchema, type AiSdkBackendOptions } from './options.js';
import { toCallOptions, type CallDefaults } from './prompt.js';

// Not imported by name: an ESM import of node:util reads every export, which loads its argument parser and MIME module.
const { inspect } = process.getBuiltinModule('node:util');

/** An AI SDK language model of a specification version this adapter speaks. */
export type AiSdkLanguageModel = LanguageModelV3 | LanguageModelV2;

const SUPPORTED_VERSIONS = ['v3', 'v2'];

/** How an AI SDK backend prints: what identifies it (the model object is not shown; its settings may hold a key). */
interface AiSdkBackendView {
  provider: string;
  modelId: string;
  specificationVersion: string;
  contextWindow: number;
  supportsImages?: boolean;
}

/** The adapter; see {@link aiSdkBackend}. */
class AiSdkBackend implements LlmBackend {
  readonly provider: string;
  readonly modelId: string;
  readonly contextWindow: number;
  readonly supportsImages?: boolean;
  readonly streaming: boolean;
  readonly pricing?: BackendPricing;
  // Private (#): the model's settings may hold the provider's key, and must never print with the backend.
  readonly #model: AiSdkLanguageModel;
  readonly #defaults: CallDefaults;
  readonly #retry: RetrySettings;
  readonly #errors: ErrorContext;
  // No key is known here; the redactor still removes secret-shaped text (`sk-…`, bearer tokens) an error echoes.
  readonly #redactor = new Redactor();

  constructor(model: AiSdkLanguageModel, input: AiSdkBackendOptions) {
    const version = (model as { specificationVersion?: unknown } | undefined)?.specificationVersion;
    if (typeof version !== 'string' || !SUPPORTED_VERSIONS.includes(version)) {
      throw new HarnessError(
        'invalid-options',
        `aiSdkBackend() takes an AI SDK language model of specification v3 or v2 (from @ai-sdk/provider 3 or 2, e.g. openai('gpt-4.1') of @ai-sdk/openai 3); this one says ${JSON.stringify(version ?? null)}. Upgrade the provider package, or use openAICompatible() / anthropic().`,
      );
    }
    const options = parseOptions('aiSdkBackend', AiSdkBackendOptionsSchema, input);
    this.#model = model;
    this.provider = options.provider ?? model.provider;
    this.modelId = model.modelId;
    this.contextWindow = options.contextWindow;
    this.supportsImages = options.supportsImages;
    this.streaming = options.stream;
    this.pricing = options.pricing;
    this.#defaults = {
      providerOptions: options.providerOptions as SharedV3ProviderOptions | undefined,
      headers: options.headers,
    };
    this.#retry = retrySettings(options);
    this.#errors = {
      provider: this.provider,
      credentialHint: `check the API key the ${model.provider} provider was created with (its \`apiKey\` setting or its environment variable)`,
    };
  }

  generate(request: GenerateRequest): Promise<GenerateResult> {
    return this.#withRetry(request, async () => {
      const answer = await this.#model.doGenerate(this.#callOptions(request));
      return resultOf(answer.content, answer.finishReason, answer.usage, answer.providerMetadata);
    });
  }

  /** Opening the stream is retried like a call; a failure after the first part is not (it was already shown). */
  async *stream(request: GenerateRequest): AsyncGenerator<StreamPart> {
    const { stream } = await this.#withRetry(request, async () => this.#model.doStream(this.#callOptions(request)));
    try {
      yield* streamParts(stream, this.provider, (error) => aiSdkError(error, this.#errors, request.signal));
    } catch (error) {
      throw this.#redactor.error(aiSdkError(error, this.#errors, request.signal));
    }
  }

  toJSON(): AiSdkBackendView {
    const { provider, modelId, contextWindow, supportsImages } = this;
    const view: AiSdkBackendView = {
      provider,
      modelId,
      specificationVersion: this.#model.specificationVersion,
      contextWindow,
    };
    if (supportsImages !== undefined) view.supportsImages = supportsImages;
    return view;
  }

  [inspect.custom](_depth: number, options: InspectOptions): string {
    return `AiSdkBackend ${inspect(this.toJSON(), options)}`;
  }

  // The prompt built here is the same for both versions: every part it uses has one shape in V2 and V3.
  #callOptions(request: GenerateRequest): LanguageModelV3CallOptions & LanguageModelV2CallOptions {
    return toCallOptions(request, this.#defaults) as LanguageModelV3CallOptions & LanguageModelV2CallOptions;
  }

  #withRetry<T>(request: GenerateRequest, attempt: () => Promise<T>): Promise<T> {
    return withRetry(
      async () => {
        try {
          return await attempt();
        } catch (error) {
          throw aiSdkError(error, this.#errors, request.signal);
        }
      },
      this.#retry,
      { signal: request.signal, onRetry: request.onRetry, redact: (error) => this.#redactor.error(error) },
    );
  }
}

/**
 * An {@link LlmBackend} over any AI SDK language model: a `LanguageModelV3` (`@ai-sdk/provider` 3, the providers of
 * AI SDK 6) or a `LanguageModelV2` (AI SDK 5). Calls go to the model's `doGenerate` / `doStream` (tool calls, parallel
 * ones included, reasoning, image parts, usage with cache reads and writes, abort); failures get the codes of the
 * shipped adapters and are retried as `maxRetries` and `retry` say. Needs the optional peer dependency
 * `@ai-sdk/provider` for its types only: nothing of it loads at run time.
 *
 * @example
 * ```ts
 * import { createOpenAI } from '@ai-sdk/openai';
 * import { aiSdkBackend } from 'horizon-harness/ai-sdk';
 *
 * const backend = aiSdkBackend(createOpenAI()('gpt-4.1'), { contextWindow: 1_047_576 });
 * ```
 */
export function aiSdkBackend(
  model: AiSdkLanguageModel,
  options: AiSdkBackendOptions,
): LlmBackend & { stream(request: GenerateRequest): AsyncIterable<StreamPart> } {
  return new AiSdkBackend(model, options);
}
