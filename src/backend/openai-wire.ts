/**
 * Chat Completions wire shapes: messages out, finish reasons and usage in.
 * @module
 * @internal
 */
import type { ContentPart, FinishReason, Message, Usage } from './types.js';

function imageUrl(part: Extract<ContentPart, { type: 'image' }>): string {
  return /^(https?:|data:)/.test(part.data) ? part.data : `data:${part.mediaType};base64,${part.data}`;
}

function userContent(content: string | ContentPart[]): unknown {
  if (typeof content === 'string') return content;
  return content.map((part) =>
    part.type === 'text'
      ? { type: 'text', text: part.text }
      : { type: 'image_url', image_url: { url: imageUrl(part) } },
  );
}

/** Chat Completions messages; tool images go into a user message after the run of tool messages (tool messages carry text only). */
export function toWireMessages(messages: Message[]): unknown[] {
  const wire: unknown[] = [];
  let pendingImages: Array<Extract<ContentPart, { type: 'image' }>> = [];
  const flushImages = () => {
    if (pendingImages.length === 0) return;
    wire.push({
      role: 'user',
      content: [
        { type: 'text', text: 'Images returned by the tool calls above:' },
        ...pendingImages.map((p) => ({ type: 'image_url', image_url: { url: imageUrl(p) } })),
      ],
    });
    pendingImages = [];
  };
  for (const message of messages) {
    if (message.role !== 'tool') flushImages();
    switch (message.role) {
      case 'system':
        wire.push({ role: 'system', content: message.content });
        break;
      case 'user':
        wire.push({ role: 'user', content: userContent(message.content) });
        break;
      case 'assistant': {
        const calls = message.toolCalls ?? [];
        wire.push({
          role: 'assistant',
          content: message.content === '' && calls.length > 0 ? null : message.content,
          ...(calls.length > 0
            ? {
                tool_calls: calls.map((call) => ({
                  id: call.id,
                  type: 'function',
                  function: { name: call.name, arguments: call.arguments },
                })),
              }
            : {}),
        });
        break;
      }
      case 'tool': {
        const parts =
          typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : message.content;
        const text = parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
        pendingImages.push(
          ...parts.filter((part): part is Extract<ContentPart, { type: 'image' }> => part.type === 'image'),
        );
        wire.push({
          role: 'tool',
          tool_call_id: message.toolCallId,
          content: message.isError ? `Error: ${text}` : text,
        });
        break;
      }
    }
  }
  flushImages();
  return wire;
}

export function jsonInstruction(schema: Record<string, unknown> | undefined): string {
  return schema
    ? `Reply with one JSON object only, no prose and no code fence, matching this JSON Schema:\n${JSON.stringify(schema)}`
    : 'Reply with one JSON object only, no prose and no code fence.';
}

const FINISH_REASONS: Record<string, FinishReason> = {
  stop: 'stop',
  eos: 'stop',
  length: 'length',
  max_tokens: 'length',
  tool_calls: 'tool-calls',
  function_call: 'tool-calls',
  content_filter: 'content-filter',
  sensitive: 'content-filter',
  error: 'error',
};

export function mapFinishReason(reason: unknown): FinishReason | undefined {
  if (typeof reason !== 'string' || reason === '') return undefined;
  return FINISH_REASONS[reason] ?? 'other';
}

/**
 * The usage of a Chat Completions answer, from every shape the compatible servers send: `prompt_tokens` with cache
 * reads in `prompt_tokens_details.cached_tokens` (OpenAI, Qwen, GLM, Groq and other compatible servers) or in
 * DeepSeek's `prompt_cache_hit_tokens` (beside `prompt_cache_miss_tokens`), and cache writes in OpenRouter's
 * `prompt_tokens_details.cache_write_tokens`.
 */
export function mapUsage(usage: unknown): Usage | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const u = usage as Record<string, unknown>;
  const details = (u.prompt_tokens_details ?? {}) as Record<string, unknown>;
  const num = (value: unknown) => (typeof value === 'number' ? value : undefined);
  const cacheHit = num(u.prompt_cache_hit_tokens);
  const cacheMiss = num(u.prompt_cache_miss_tokens);
  const cached = num(details.cached_tokens) ?? cacheHit;
  const cacheWrite = num(details.cache_write_tokens);
  const deepSeekPrompt = cacheHit !== undefined && cacheMiss !== undefined ? cacheHit + cacheMiss : undefined;
  const result: Usage = {
    inputTokens: num(u.prompt_tokens) ?? deepSeekPrompt ?? 0,
    outputTokens: num(u.completion_tokens) ?? 0,
  };
  if (cached !== undefined) result.cachedInputTokens = cached;
  if (cacheWrite !== undefined) result.cacheWriteInputTokens = cacheWrite;
  return result;
}

export interface WireToolCallDelta {
  index?: number;
  id?: string | null;
  function?: { name?: string | null; arguments?: string | null };
}
