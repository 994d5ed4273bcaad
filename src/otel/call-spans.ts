/**
 * The spans of a run's model calls (`chat`) and tool calls (`execute_tool`), by call id, and the usage they add up to.
 * @module
 * @internal
 */
import type { Attributes } from '@opentelemetry/api';
import type { EventOf } from '../events.js';
import { ERROR_TYPES, finishReasonOf, GEN_AI, HH, SPAN_EVENTS } from './attributes.js';
import type { ContentRecorder } from './content.js';
import type { SpanNode, SpanTree } from './span-tree.js';

/** The open model and tool calls of one run. @internal */
export class CallSpans {
  private readonly chats = new Map<string, SpanNode>();
  /** Open tool spans by tool call id, oldest first (a model may reuse an id). */
  private readonly tools = new Map<string, SpanNode[]>();
  /** Tokens of the calls that returned. */
  readonly usage = { input: 0, output: 0 };

  constructor(
    private readonly tree: SpanTree,
    private readonly content: ContentRecorder | undefined,
  ) {}

  /** Starts a model call's `chat` span under `parent`. */
  request(event: EventOf<'llm-request'>, parent: SpanNode): void {
    const attributes: Attributes = {
      [GEN_AI.operationName]: 'chat',
      [GEN_AI.providerName]: event.provider,
      [GEN_AI.requestModel]: event.modelId,
      [GEN_AI.conversationId]: event.runId,
      [HH.purpose]: event.purpose,
      [HH.callId]: event.callId,
      [HH.requestMessages]: event.messages,
      [HH.requestTokens]: event.requestTokens,
    };
    if (event.scope) attributes[HH.scope] = event.scope;
    if (event.maxOutputTokens !== undefined) attributes[GEN_AI.requestMaxTokens] = event.maxOutputTokens;
    if (event.temperature !== undefined) attributes[GEN_AI.requestTemperature] = event.temperature;
    if (event.topP !== undefined) attributes[GEN_AI.requestTopP] = event.topP;
    if (this.content && event.content)
      attributes[GEN_AI.inputMessages] = this.content.inputMessages(event.content.messages);
    const node = this.tree.open(
      { name: `chat ${event.modelId}`, kind: 'call', spanKind: 'client', start: event.timestamp, attributes },
      parent,
    );
    this.chats.set(event.callId, node);
  }

  /** Notes a retry of the call on its span. */
  retry(event: EventOf<'llm-retry'>): void {
    this.chats.get(event.callId)?.span.addEvent(
      SPAN_EVENTS.retry,
      {
        [HH.attempt]: event.attempt,
        [HH.retryDelayMs]: event.delayMs,
        [GEN_AI.errorType]: event.error.code,
        [HH.retryError]: event.error.message,
      },
      event.timestamp,
    );
  }

  /** Ends the call's span with its usage and finish reason (and reply, when content is captured). */
  response(event: EventOf<'llm-response'>): void {
    const node = this.chats.get(event.callId);
    if (!node) return;
    this.chats.delete(event.callId);
    const { usage } = event;
    this.usage.input += usage.inputTokens;
    this.usage.output += usage.outputTokens;
    node.span.setAttributes({
      [GEN_AI.usageInputTokens]: usage.inputTokens,
      [GEN_AI.usageOutputTokens]: usage.outputTokens,
      ...(usage.cachedInputTokens === undefined ? {} : { [GEN_AI.usageCacheReadInputTokens]: usage.cachedInputTokens }),
      ...(usage.cacheWriteInputTokens === undefined
        ? {}
        : { [GEN_AI.usageCacheCreationInputTokens]: usage.cacheWriteInputTokens }),
      [GEN_AI.responseFinishReasons]: [finishReasonOf(event.finishReason)],
      [HH.responseToolCalls]: event.toolCalls,
    });
    if (this.content && event.content) {
      node.span.setAttribute(
        GEN_AI.outputMessages,
        this.content.outputMessages(event.content.message, event.finishReason),
      );
    }
    this.tree.end(node, event.timestamp);
  }

  /** Starts a tool call's `execute_tool` span under `parent`. */
  toolCall(event: EventOf<'tool-call'>, parent: SpanNode): void {
    const attributes: Attributes = {
      [GEN_AI.operationName]: 'execute_tool',
      [GEN_AI.toolName]: event.toolName,
      [GEN_AI.toolCallId]: event.callId,
      [GEN_AI.toolType]: 'function',
      [GEN_AI.conversationId]: event.runId,
      [HH.purpose]: event.purpose,
    };
    if (event.scope) attributes[HH.scope] = event.scope;
    if (this.content) attributes[GEN_AI.toolCallArguments] = this.content.arguments(event.arguments);
    const node = this.tree.open(
      { name: `execute_tool ${event.toolName}`, kind: 'call', start: event.timestamp, attributes },
      parent,
    );
    const open = this.tools.get(event.callId) ?? [];
    open.push(node);
    this.tools.set(event.callId, open);
  }

  /** Ends a tool call's span; an error result makes it an error. */
  toolResult(event: EventOf<'tool-result'>): void {
    const open = this.tools.get(event.callId);
    const node = open?.shift();
    if (!open?.length) this.tools.delete(event.callId);
    if (!node) return;
    node.span.setAttributes({ [HH.toolOutputChars]: event.outputChars, [HH.toolFiles]: event.files.length });
    if (event.isError) {
      this.tree.fail(
        node,
        { type: ERROR_TYPES.tool, message: `${event.toolName} returned an error.` },
        event.timestamp,
      );
    }
    // Tools of one reply run side by side and report together: each ends when its own duration says.
    this.tree.end(node, Math.min(event.timestamp, node.start + event.durationMs));
  }
}
