/**
 * AI SDK answers (V2 and V3) as harness results: content, finish reasons, usage and stream parts.
 * @module
 * @internal
 */
import type {
  LanguageModelV2Content,
  LanguageModelV2FinishReason,
  LanguageModelV2StreamPart,
  LanguageModelV2Usage,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
  SharedV3ProviderMetadata,
} from '@ai-sdk/provider';
import { HarnessError } from '../errors.js';
import { StreamAssembler, type OpenToolCall } from '../backend/stream-assembler.js';
import type { FinishReason, GenerateResult, StreamPart, Usage } from '../backend/types.js';

/**
 * {@link Usage} with the prompt-cache writes a V3 model reports (`inputTokens.cacheWrite`).
 * @internal
 */
export type AiSdkUsage = Usage & { cacheWriteInputTokens?: number };

type AnyFinishReason = LanguageModelV2FinishReason | LanguageModelV3FinishReason;
type AnyStreamPart = LanguageModelV2StreamPart | LanguageModelV3StreamPart;

const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;

/** V3's `{ unified, raw }` or V2's string; V2's `unknown` is `other`. @internal */
export function mapFinishReason(reason: AnyFinishReason | undefined): FinishReason | undefined {
  const unified = typeof reason === 'object' && reason !== null ? reason.unified : reason;
  if (unified === undefined) return undefined;
  return unified === 'unknown' ? 'other' : unified;
}

/**
 * Usage with every input token counted in `inputTokens`, the cached ones included (as {@link Usage} says). V3 splits
 * input into uncached, cache reads and cache writes; a V2 model's `inputTokens` is passed on as the provider counts it.
 * Cache writes a usage does not give come from the provider metadata where it has them (see {@link metadataCacheWrites}).
 * @internal
 */
export function mapUsage(
  usage: LanguageModelV2Usage | LanguageModelV3Usage | undefined,
  metadata?: SharedV3ProviderMetadata | undefined,
): AiSdkUsage {
  const result = baseUsage(usage);
  const writes = result.cacheWriteInputTokens ?? metadataCacheWrites(metadata);
  if (writes) result.cacheWriteInputTokens = writes;
  return result;
}

function baseUsage(usage: LanguageModelV2Usage | LanguageModelV3Usage | undefined): AiSdkUsage {
  if (usage === undefined) return { inputTokens: 0, outputTokens: 0 };
  if (typeof usage.inputTokens === 'object' && usage.inputTokens !== null) {
    const { inputTokens, outputTokens } = usage as LanguageModelV3Usage;
    const cacheRead = count(inputTokens.cacheRead);
    const cacheWrite = count(inputTokens.cacheWrite);
    const input = count(inputTokens.total) ?? (count(inputTokens.noCache) ?? 0) + (cacheRead ?? 0) + (cacheWrite ?? 0);
    const output = count(outputTokens.total) ?? (count(outputTokens.text) ?? 0) + (count(outputTokens.reasoning) ?? 0);
    const result: AiSdkUsage = { inputTokens: input, outputTokens: output };
    if (cacheRead) result.cachedInputTokens = cacheRead;
    if (cacheWrite) result.cacheWriteInputTokens = cacheWrite;
    return result;
  }
  const v2 = usage as LanguageModelV2Usage;
  const result: AiSdkUsage = { inputTokens: count(v2.inputTokens) ?? 0, outputTokens: count(v2.outputTokens) ?? 0 };
  const cached = count(v2.cachedInputTokens);
  if (cached) result.cachedInputTokens = cached;
  return result;
}

/**
 * Prompt-cache writes as the provider packages put them in their metadata: `cacheCreationInputTokens` (Anthropic,
 * also on Vertex and Bedrock through the `anthropic` key) or `usage.cacheWriteInputTokens` (Bedrock), under any
 * provider key.
 * @internal
 */
export function metadataCacheWrites(metadata: SharedV3ProviderMetadata | undefined): number | undefined {
  for (const entry of Object.values(metadata ?? {})) {
    const usage = entry?.usage;
    const nested = typeof usage === 'object' && usage !== null && !Array.isArray(usage) ? usage : {};
    const writes = count(entry?.cacheCreationInputTokens) ?? count(nested.cacheWriteInputTokens);
    if (writes !== undefined) return writes;
  }
  return undefined;
}

/**
 * The result of a `doGenerate` answer: text, reasoning and the tool calls the harness is to run. Tool calls the
 * provider ran itself (`providerExecuted`), their results, files and sources are not the harness's to act on.
 * @internal
 */
export function resultOf(
  content: ReadonlyArray<LanguageModelV2Content | LanguageModelV3Content>,
  finishReason: AnyFinishReason,
  usage: LanguageModelV2Usage | LanguageModelV3Usage,
  metadata: SharedV3ProviderMetadata | undefined,
): GenerateResult {
  const assembler = new StreamAssembler();
  for (const part of content) {
    if (part.type === 'text') assembler.addText(part.text);
    else if (part.type === 'reasoning') assembler.addReasoning(part.text);
    else if (part.type === 'tool-call' && !part.providerExecuted) {
      assembler.appendArguments(assembler.openCall(part.toolCallId, part.toolName), part.input, false);
    }
  }
  assembler.finishReason = mapFinishReason(finishReason);
  assembler.usage = mapUsage(usage, metadata);
  return assembler.result('other');
}

/**
 * The parts of a `doStream` answer, then `finish`. An `error` part is thrown as `toError` maps it; a stream that ends
 * without the model's `finish` part is a retryable `invalid-response`, never a silently partial answer. Stopping early
 * cancels the provider's stream (and so its HTTP response).
 * @internal
 */
export async function* streamParts(
  stream: ReadableStream<AnyStreamPart>,
  provider: string,
  toError: (error: unknown) => HarnessError,
): AsyncGenerator<StreamPart> {
  const assembler = new StreamAssembler();
  const calls = new Map<string, OpenToolCall>();
  let finished = false;
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value: part } = await reader.read();
      if (done) break;
      let out: StreamPart | undefined;
      switch (part.type) {
        case 'text-delta':
          out = assembler.addText(part.delta);
          break;
        case 'reasoning-delta':
          out = assembler.addReasoning(part.delta);
          break;
        case 'tool-input-start':
          if (part.providerExecuted) break;
          calls.set(part.id, assembler.openCall(part.id, part.toolName));
          out = assembler.appendArguments(calls.get(part.id) as OpenToolCall, '', true);
          break;
        case 'tool-input-delta': {
          const call = calls.get(part.id);
          if (call) out = assembler.appendArguments(call, part.delta, false);
          break;
        }
        case 'tool-call':
          if (!part.providerExecuted) out = completeCall(assembler, calls, part.toolCallId, part.toolName, part.input);
          break;
        case 'error':
          throw toError(part.error);
        case 'finish':
          assembler.finishReason = mapFinishReason(part.finishReason);
          assembler.usage = mapUsage(part.usage, part.providerMetadata);
          finished = true;
          break;
        default:
          break;
      }
      if (out) yield out;
    }
  } catch (error) {
    throw HarnessError.isInstance(error) ? error : toError(error);
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
  if (!finished) {
    const message = `${provider} closed the stream before the model finished; the answer is incomplete.`;
    throw new HarnessError('invalid-response', message, { retryable: true });
  }
  yield { type: 'finish', result: assembler.result('other') };
}

/**
 * A complete `tool-call` part: its input is the call's arguments. After streamed input deltas it yields what they
 * missed (nothing when they spelled it all); a call that was not streamed is announced whole.
 */
function completeCall(
  assembler: StreamAssembler,
  calls: Map<string, OpenToolCall>,
  id: string,
  name: string,
  input: string,
): StreamPart | undefined {
  const streamed = calls.get(id);
  if (streamed === undefined) return assembler.appendArguments(assembler.openCall(id, name), input, true);
  if (input.startsWith(streamed.arguments))
    return assembler.appendArguments(streamed, input.slice(streamed.arguments.length), false);
  // The provider repaired the streamed text (e.g. empty input became `{}`): the final input is the call's.
  streamed.arguments = input;
  return undefined;
}
