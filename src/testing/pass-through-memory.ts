import type { Message, ToolSpec } from '../backend/types.js';
import { estimateRequestTokens } from '../llm/call-model.js';
import type { ExecutionMemory, PendingRequest } from '../memory/types.js';
import type { ToolInvocation } from '../tools/types.js';

/**
 * An {@link ExecutionMemory} that bounds nothing: observations pass through whole (nothing is saved in the workspace),
 * requests are sent as they are whatever their output reserve, and counts are never calibrated. For tests of
 * components that need a memory but do not exercise it; never use it for real runs.
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

  /** A rough size, the same for every backend: `estimateRequestTokens` (one token per four characters). */
  countRequest(messages: readonly Message[], tools: readonly ToolSpec[]): number {
    return estimateRequestTokens(messages, tools);
  }
}
