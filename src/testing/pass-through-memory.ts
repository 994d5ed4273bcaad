import type { Message, ToolSpec } from '../backend/types.js';
import type { ExecutionMemory, PendingRequest } from '../memory/types.js';
import type { ToolInvocation } from '../tools/types.js';

/**
 * An {@link ExecutionMemory} that bounds nothing: observations pass through whole and requests are sent as they are.
 * For tests of components that need a memory but do not exercise it; never use it for real runs.
 */
export class PassThroughMemory implements ExecutionMemory {
  /** Returns the tool's raw text unchanged. */
  async boundObservation(invocation: ToolInvocation): Promise<string> {
    return invocation.text;
  }

  /** Returns the dialogue unchanged (as a copy). */
  async fitRequest(request: PendingRequest): Promise<Message[]> {
    return [...request.messages];
  }

  /** Returns the dialogue unchanged (as a copy): this memory never prunes. */
  pruneAfterOverflow(request: PendingRequest): Message[] {
    return [...request.messages];
  }

  /** A rough size: one token per four characters of content, arguments and tool schemas. */
  countRequest(messages: readonly Message[], tools: readonly ToolSpec[]): number {
    let chars = JSON.stringify(tools).length;
    for (const message of messages) {
      if (typeof message.content === 'string') chars += message.content.length;
      else for (const part of message.content) chars += part.type === 'text' ? part.text.length : part.data.length;
      if (message.role === 'assistant') for (const call of message.toolCalls ?? []) chars += call.name.length + call.arguments.length;
    }
    return Math.ceil(chars / 4);
  }
}
