/**
 * Opt-in content: a model call's messages and reply, and a tool call's arguments, in the JSON shapes of the GenAI
 * conventions (`gen_ai.input.messages`, `gen_ai.output.messages`), with known secrets redacted.
 * @module
 * @internal
 */
import { Redactor } from '../backend/redact.js';
import type { ContentPart, FinishReason, GenerateResult, Message, ToolCall } from '../backend/types.js';
import { finishReasonOf } from './attributes.js';

/** Environment variable names whose values are credentials (the same idea as the adapters' secret headers). */
const SECRET_NAME = /key|token|secret|passw|credential|auth|cookie|session/i;

type Part = Record<string, unknown>;

/** Turns captured content into attribute values, redacting every string that goes into one. @internal */
export class ContentRecorder {
  readonly #redactor: Redactor;

  /** `secrets`: strings to redact besides the values of secret-named environment variables. */
  constructor(secrets: readonly string[], env: NodeJS.ProcessEnv = process.env) {
    const fromEnv = Object.entries(env).flatMap(([name, value]) => (value && SECRET_NAME.test(name) ? [value] : []));
    this.#redactor = new Redactor([...fromEnv, ...secrets]);
  }

  /** `text` with every known secret replaced. */
  text(text: string): string {
    return this.#redactor.text(text);
  }

  /** The request's messages as `gen_ai.input.messages` (a JSON string). */
  inputMessages(messages: readonly Message[]): string {
    return JSON.stringify(messages.map((message) => this.#message(message)));
  }

  /** The reply as `gen_ai.output.messages` (a JSON string). */
  outputMessages(message: GenerateResult['message'], finishReason: FinishReason): string {
    const parts: Part[] = [];
    if (message.reasoning) parts.push({ type: 'reasoning', content: this.text(message.reasoning) });
    if (message.content) parts.push({ type: 'text', content: this.text(message.content) });
    for (const call of message.toolCalls ?? []) parts.push(this.#toolCall(call));
    return JSON.stringify([{ role: 'assistant', parts, finish_reason: finishReasonOf(finishReason) }]);
  }

  /** A plain-text exchange (the run's request, its deliverable) as one message of `role`. */
  textMessages(role: 'user' | 'assistant', text: string, finishReason?: string): string {
    const message: Part = { role, parts: [{ type: 'text', content: this.text(text) }] };
    if (finishReason) message.finish_reason = finishReason;
    return JSON.stringify([message]);
  }

  /** A tool call's raw JSON arguments, redacted. */
  arguments(raw: string): string {
    return this.text(raw);
  }

  #message(message: Message): Part {
    switch (message.role) {
      case 'system':
        return { role: 'system', parts: [{ type: 'text', content: this.text(message.content) }] };
      case 'user':
        return { role: 'user', parts: this.#parts(message.content) };
      case 'assistant': {
        const parts: Part[] = message.content ? [{ type: 'text', content: this.text(message.content) }] : [];
        for (const call of message.toolCalls ?? []) parts.push(this.#toolCall(call));
        return { role: 'assistant', parts };
      }
      case 'tool': {
        const response = this.#parts(message.content)
          .map((part) => (typeof part.content === 'string' ? part.content : ''))
          .join('\n');
        return { role: 'tool', parts: [{ type: 'tool_call_response', id: message.toolCallId, response }] };
      }
    }
  }

  #parts(content: string | ContentPart[]): Part[] {
    if (typeof content === 'string') return [{ type: 'text', content: this.text(content) }];
    return content.map((part) =>
      part.type === 'text' ? { type: 'text', content: this.text(part.text) } : this.#image(part),
    );
  }

  /** An image as a `uri` part when it is a URL; base64 data is left out (an empty `blob`): it would bloat every span. */
  #image(part: Extract<ContentPart, { type: 'image' }>): Part {
    if (/^https?:\/\//i.test(part.data)) {
      return { type: 'uri', modality: 'image', mime_type: part.mediaType, uri: this.text(part.data) };
    }
    return { type: 'blob', modality: 'image', mime_type: part.mediaType, content: '' };
  }

  #toolCall(call: ToolCall): Part {
    return { type: 'tool_call', id: call.id, name: call.name, arguments: parseArguments(this.text(call.arguments)) };
  }
}

/** The conventions expect arguments as an object; text that is not JSON stays text. */
function parseArguments(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
