/**
 * Builds a {@link GenerateResult} from streamed pieces and emits the matching {@link StreamPart}s.
 * @module
 * @internal
 */
import { HarnessError } from '../errors.js';
import type { FinishReason, GenerateResult, StreamPart, ToolCall, Usage } from './types.js';

/** A fresh tool-call id for providers that send an empty or missing one, so tool results can be matched. @internal */
export function generateToolCallId(): string {
  // The Web Crypto global rather than an import of node:crypto, which would load with the package.
  return `call_${crypto.randomUUID().replaceAll('-', '')}`;
}

/** One tool call being assembled. @internal */
export interface OpenToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** Collects text, reasoning, tool calls, usage and the finish reason of one answer. @internal */
export class StreamAssembler {
  private text = '';
  private reasoning = '';
  private readonly calls: OpenToolCall[] = [];
  usage: Usage = { inputTokens: 0, outputTokens: 0 };
  finishReason: FinishReason | undefined;

  /** The text delta part, or nothing for an empty delta. */
  addText(delta: unknown): StreamPart | undefined {
    if (typeof delta !== 'string' || delta === '') return undefined;
    this.text += delta;
    return { type: 'text-delta', text: delta };
  }

  addReasoning(delta: unknown): StreamPart | undefined {
    if (typeof delta !== 'string' || delta === '') return undefined;
    this.reasoning += delta;
    return { type: 'reasoning-delta', text: delta };
  }

  /** Opens a call; an empty or missing id gets a generated one. */
  openCall(id: string | undefined, name: string): OpenToolCall {
    const call = { id: id !== undefined && id !== '' ? id : generateToolCallId(), name, arguments: '' };
    this.calls.push(call);
    return call;
  }

  findCall(id: string): OpenToolCall | undefined {
    return this.calls.find((call) => call.id === id);
  }

  get lastCall(): OpenToolCall | undefined {
    return this.calls.at(-1);
  }

  appendArguments(call: OpenToolCall, delta: string, announceName: boolean): StreamPart | undefined {
    call.arguments += delta;
    if (!announceName && delta === '') return undefined;
    return announceName
      ? { type: 'tool-call-delta', id: call.id, name: call.name, argumentsDelta: delta }
      : { type: 'tool-call-delta', id: call.id, argumentsDelta: delta };
  }

  /** The final result; `fallbackReason` is used when the provider never sent one. */
  result(fallbackReason: FinishReason): GenerateResult {
    const toolCalls: ToolCall[] = this.calls.map((call) => ({
      id: call.id,
      name: call.name,
      // No argument text means "no arguments": `{}` parses where an empty string would not.
      arguments: call.arguments.trim() === '' ? '{}' : call.arguments,
    }));
    let finishReason = this.finishReason ?? fallbackReason;
    // Some servers say "stop" while returning tool calls; the caller must still run them.
    if (finishReason === 'stop' && toolCalls.length > 0) finishReason = 'tool-calls';
    const message: GenerateResult['message'] = { role: 'assistant', content: this.text, toolCalls };
    if (this.reasoning !== '') message.reasoning = this.reasoning;
    return { message, finishReason, usage: this.usage };
  }
}

/** The parts a stream of `result` would have yielded: reasoning, text, each tool call whole, then `finish`. @internal */
export function* partsOf(result: GenerateResult): Generator<StreamPart> {
  const { reasoning, content, toolCalls } = result.message;
  if (reasoning) yield { type: 'reasoning-delta', text: reasoning };
  if (content !== '') yield { type: 'text-delta', text: content };
  for (const call of toolCalls)
    yield { type: 'tool-call-delta', id: call.id, name: call.name, argumentsDelta: call.arguments };
  yield { type: 'finish', result };
}

/** Reads parts to the end and returns the `finish` part's result. @internal */
export async function finishOf(
  parts: AsyncIterable<StreamPart> | Iterable<StreamPart>,
  provider: string,
): Promise<GenerateResult> {
  let finish: GenerateResult | undefined;
  for await (const part of parts) if (part.type === 'finish') finish = part.result;
  if (finish === undefined)
    throw new HarnessError('invalid-response', `${provider} stream ended without a result.`, { retryable: true });
  return finish;
}
