/**
 * Ask a model for JSON, re-asking once with the validation error.
 * @module
 */
import type { z } from 'zod';
import type { Message } from '../backend/types.js';
import { DEFAULTS } from '../defaults.js';
import { callModel, type ModelCallContext } from '../llm/call-model.js';
import { headTail } from '../memory/truncate.js';
import { type JsonReplyRules, parseJsonReply } from './parse-json-reply.js';

/** The outcome of {@link askJson}. `calls` is 1, or 2 when the first reply had to be re-asked. */
export type AskJsonResult<T> =
  | { ok: true; value: T; calls: number }
  | { ok: false; error: string; calls: number; lastReply: string };

/** Characters of an over-long reply quoted back in the re-ask: enough to see what went wrong, not the whole. */
const QUOTED_REPLY_CHARS = 2_000;

/**
 * Sends `messages`, parses the reply leniently (code fences, leading prose) and validates it with `schema` under
 * `rules` (see {@link parseJsonReply}). An invalid reply is re-asked once, quoting the validation error; nothing loops
 * further. A reply too long to be read is quoted back head and tail only. Backend errors (including aborts) propagate
 * to the caller.
 */
export async function askJson<T>(
  context: ModelCallContext,
  messages: Message[],
  schema: z.ZodType<T>,
  rules: JsonReplyRules = {},
): Promise<AskJsonResult<T>> {
  const first = await callModel(context, { messages, responseFormat: { type: 'json' } });
  const firstParse = parseJsonReply(first.message.content, schema, rules);
  if (firstParse.ok) return { ok: true, value: firstParse.value, calls: 1 };

  const maxChars = rules.maxChars ?? DEFAULTS.maxJsonReplyChars;
  const content = first.message.content;
  const retryMessages: Message[] = [
    ...messages,
    { role: 'assistant', content: content.length > maxChars ? headTail(content, QUOTED_REPLY_CHARS) : content },
    {
      role: 'user',
      content:
        `Your reply could not be used. ${firstParse.error}\n` +
        'Reply again with only the JSON object in the required shape: no prose, no code fence.',
    },
  ];
  const second = await callModel(context, { messages: retryMessages, responseFormat: { type: 'json' } });
  const secondParse = parseJsonReply(second.message.content, schema, rules);
  if (secondParse.ok) return { ok: true, value: secondParse.value, calls: 2 };
  return { ok: false, error: secondParse.error, calls: 2, lastReply: second.message.content };
}
