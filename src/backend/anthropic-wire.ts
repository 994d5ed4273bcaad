/**
 * The Messages API's wire format: the harness's messages as Anthropic content blocks, and its stop reasons and usage
 * figures back in the harness's terms. Pure translation, no I/O.
 * @module
 */
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

/** Messages API turns: system text apart, consecutive tool results merged into one user turn. */
export function toWire(messages: Message[]): { system: string; messages: Array<{ role: string; content: unknown[] }> } {
  const system: string[] = [];
  const wire: Array<{ role: string; content: unknown[] }> = [];
  let toolTurn: { role: string; content: unknown[] } | undefined;
  for (const message of messages) {
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
  }
  return { system: system.join('\n\n'), messages: wire };
}

export function mapUsage(usage: unknown, into: Usage): Usage {
  if (typeof usage !== 'object' || usage === null) return into;
  const u = usage as Record<string, unknown>;
  const num = (key: string) => (typeof u[key] === 'number' ? (u[key] as number) : undefined);
  const cacheRead = num('cache_read_input_tokens');
  const cacheWrite = num('cache_creation_input_tokens');
  const input = num('input_tokens');
  const result: Usage = { ...into };
  // The Messages API counts cached prompt tokens apart from input_tokens; the prompt's size is their sum.
  if (input !== undefined) result.inputTokens = input + (cacheRead ?? 0) + (cacheWrite ?? 0);
  if (num('output_tokens') !== undefined) result.outputTokens = num('output_tokens') ?? 0;
  if (cacheRead !== undefined) result.cachedInputTokens = cacheRead;
  return result;
}
