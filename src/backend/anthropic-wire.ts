/**
 * The Messages API's wire format: the harness's messages as Anthropic content blocks, and its stop reasons and usage
 * figures back in the harness's terms. Pure translation, no I/O.
 * @module
 */
import type { WireBlockRef } from './anthropic-cache.js';
import type { ContentPart, FinishReason, Message, Usage } from './types.js';

const STOP_REASONS: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool-calls',
  refusal: 'content-filter',
};

export function mapStopReason(reason: unknown): FinishReason | undefined {
  if (typeof reason !== 'string' || reason === '') return undefined;
  return STOP_REASONS[reason] ?? 'other';
}

function contentBlocks(content: string | ContentPart[]): unknown[] {
  const parts = typeof content === 'string' ? [{ type: 'text' as const, text: content }] : content;
  return parts
    .filter((part) => part.type !== 'text' || part.text !== '')
    .map((part) => {
      if (part.type === 'text') return { type: 'text', text: part.text };
      return /^https?:/.test(part.data)
        ? { type: 'image', source: { type: 'url', url: part.data } }
        : {
            type: 'image',
            source: { type: 'base64', media_type: part.mediaType, data: part.data.replace(/^data:[^,]*,/, '') },
          };
    });
}

function parseArguments(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text === '' ? '{}' : text);
    return typeof value === 'object' && value !== null ? value : { value };
  } catch {
    // The Messages API requires an object; a model's broken JSON is passed back verbatim so it can see its mistake.
    return { _raw: text };
  }
}

/**
 * Messages API turns: system text apart, consecutive tool results merged into one user turn. `ends[i]` is where
 * message `i` ends in them (its last block), for cache markers; a message that adds no block has none.
 */
export function toWire(messages: Message[]): {
  system: string;
  messages: Array<{ role: string; content: unknown[] }>;
  ends: Array<WireBlockRef | undefined>;
} {
  const system: string[] = [];
  const wire: Array<{ role: string; content: unknown[] }> = [];
  const ends: Array<WireBlockRef | undefined> = [];
  let toolTurn: { role: string; content: unknown[] } | undefined;
  const lastBlock = (): WireBlockRef | undefined => {
    const turn = wire.length - 1;
    const block = (wire[turn]?.content.length ?? 0) - 1;
    return turn >= 0 && block >= 0 ? { turn, block } : undefined;
  };
  for (const message of messages) {
    const turnsBefore = wire.length;
    const blocksBefore = wire.at(-1)?.content.length ?? 0;
    if (message.role !== 'tool') toolTurn = undefined;
    switch (message.role) {
      case 'system':
        system.push(message.content);
        break;
      case 'user': {
        const content = contentBlocks(message.content);
        if (content.length > 0) wire.push({ role: 'user', content });
        break;
      }
      case 'assistant': {
        const content: unknown[] = message.content !== '' ? [{ type: 'text', text: message.content }] : [];
        for (const call of message.toolCalls ?? [])
          content.push({ type: 'tool_use', id: call.id, name: call.name, input: parseArguments(call.arguments) });
        if (content.length > 0) wire.push({ role: 'assistant', content });
        break;
      }
      case 'tool': {
        if (toolTurn === undefined) {
          toolTurn = { role: 'user', content: [] };
          wire.push(toolTurn);
        }
        toolTurn.content.push({
          type: 'tool_result',
          tool_use_id: message.toolCallId,
          content: contentBlocks(message.content),
          ...(message.isError ? { is_error: true } : {}),
        });
        break;
      }
    }
    const added = wire.length !== turnsBefore || (wire.at(-1)?.content.length ?? 0) !== blocksBefore;
    ends.push(added ? lastBlock() : undefined);
  }
  return { system: system.join('\n\n'), messages: wire, ends };
}

/**
 * Folds a usage object (of a whole message, or of a stream's `message_start` / `message_delta`) into `into`. The
 * Messages API counts cache reads (`cache_read_input_tokens`) and writes (`cache_creation_input_tokens`) apart from
 * `input_tokens`; the prompt's size, `inputTokens`, is the three added. A figure a later event leaves out keeps its
 * earlier value.
 */
export function mapUsage(usage: unknown, into: Usage): Usage {
  if (typeof usage !== 'object' || usage === null) return into;
  const u = usage as Record<string, unknown>;
  const num = (key: string) => (typeof u[key] === 'number' ? (u[key] as number) : undefined);
  const cacheRead = num('cache_read_input_tokens');
  const cacheWrite = num('cache_creation_input_tokens');
  const input = num('input_tokens');
  const result: Usage = { ...into };
  if (cacheRead !== undefined) result.cachedInputTokens = cacheRead;
  if (cacheWrite !== undefined) result.cacheWriteInputTokens = cacheWrite;
  if (input !== undefined)
    result.inputTokens = input + (result.cachedInputTokens ?? 0) + (result.cacheWriteInputTokens ?? 0);
  if (num('output_tokens') !== undefined) result.outputTokens = num('output_tokens') ?? 0;
  return result;
}
