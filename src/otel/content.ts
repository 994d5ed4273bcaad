/**
 * Opt-in content: a model call's messages and reply, and a tool call's arguments, in the JSON shapes of the GenAI
 * conventions (`gen_ai.input.messages`, `gen_ai.output.messages`). It is built from events the instrumentation has
 * already redacted; tool results are left out (only their size is recorded).
 * @module
 * @internal
 */
import type { ContentPart, FinishReason, GenerateResult, Message, ToolCall } from '../backend/types.js';
import { finishReasonOf } from './attributes.js';

type Part = Record<string, unknown>;

/** Turns captured content into attribute values. @internal */
export class ContentRecorder {
  /** The request's messages as `gen_ai.input.messages` (a JSON string). */
  inputMessages(messages: readonly Message[]): string {
    return JSON.stringify(messages.map((message) => this.#message(message)));
  }

  /** The reply as `gen_ai.output.messages` (a JSON string). */
  outputMessages(message: GenerateResult['message'], finishReason: FinishReason): string {
    const parts: Part[] = [];
    if (message.reasoning) parts.push({ type: 'reasoning', content: message.reasoning });
    if (message.content) parts.push({ type: 'text', content: message.content });
    for (const call of message.toolCalls ?? []) parts.push(this.#toolCall(call));
    return JSON.stringify([{ role: 'assistant', parts, finish_reason: finishReasonOf(finishReason) }]);
  }

  /** A plain-text exchange (the run's request, its deliverable) as one message of `role`. */
  textMessages(role: 'user' | 'assistant', text: string, finishReason?: string): string {
    const message: Part = { role, parts: [{ type: 'text', content: text }] };
    if (finishReason) message.finish_reason = finishReason;
    return JSON.stringify([message]);
  }

  /** A tool call's raw JSON arguments. */
  arguments(raw: string): string {
    return raw;
  }

  #message(message: Message): Part {
    switch (message.role) {
      case 'system':
        return { role: 'system', parts: [{ type: 'text', content: message.content }] };
      case 'user':
        return { role: 'user', parts: this.#parts(message.content) };
      case 'assistant': {
        const parts: Part[] = message.content ? [{ type: 'text', content: message.content }] : [];
        for (const call of message.toolCalls ?? []) parts.push(this.#toolCall(call));
        return { role: 'assistant', parts };
      }
      case 'tool': {
        // A tool's output is whatever the tool read (files, pages, environments): never recorded, only its size.
        const chars = textLength(message.content);
        const response = `[tool result not recorded: ${chars} characters]`;
        return { role: 'tool', parts: [{ type: 'tool_call_response', id: message.toolCallId, response }] };
      }
    }
  }

  #parts(content: string | ContentPart[]): Part[] {
    if (typeof content === 'string') return [{ type: 'text', content: content }];
    return content.map((part) => (part.type === 'text' ? { type: 'text', content: part.text } : this.#image(part)));
  }

  /** An image as a `uri` part when it is a URL; base64 data is left out (an empty `blob`): it would bloat every span. */
  #image(part: Extract<ContentPart, { type: 'image' }>): Part {
    if (/^https?:\/\//i.test(part.data)) {
      return { type: 'uri', modality: 'image', mime_type: part.mediaType, uri: part.data };
    }
    return { type: 'blob', modality: 'image', mime_type: part.mediaType, content: '' };
  }

  #toolCall(call: ToolCall): Part {
    return { type: 'tool_call', id: call.id, name: call.name, arguments: parseArguments(call.arguments) };
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

/** Characters of text in a message's content. */
function textLength(content: string | ContentPart[]): number {
  if (typeof content === 'string') return content.length;
  return content.reduce((sum, part) => sum + (part.type === 'text' ? part.text.length : 0), 0);
}
