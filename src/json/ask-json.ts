/**
 * Ask a model for JSON, re-asking once with the validation error.
 * @module
 */
import type { z } from 'zod';
import type { Message } from '../backend/types.js';
import { callModel, type ModelCallContext } from '../llm/call-model.js';
import { parseJsonReply } from './parse-json-reply.js';

/** The outcome of {@link askJson}. `calls` is 1, or 2 when the first reply had to be re-asked. */
export type AskJsonResult<T> =
  | { ok: true; value: T; calls: number }
  | { ok: false; error: string; calls: number; lastReply: string };

/**
 * Sends `messages`, parses the reply leniently (code fences, leading prose) and validates it with
 * `schema`. An invalid reply is re-asked once, quoting the validation error; nothing loops further.
 * Backend errors (including aborts) propagate to the caller.
 */
export async function askJson<T>(
  context: ModelCallContext,
  messages: Message[],
  schema: z.ZodType<T>,
): Promise<AskJsonResult<T>> {
  const first = await callModel(context, { messages, responseFormat: { type: 'json' } });
  const firstParse = parseJsonReply(first.message.content, schema);
  if (firstParse.ok) return { ok: true, value: firstParse.value, calls: 1 };

  const retryMessages: Message[] = [
    ...messages,
    { role: 'assistant', content: first.message.content },
    {
      role: 'user',
      content:
        `Your reply could not be used. ${firstParse.error}\n` +
        'Reply again with only the JSON object in the required shape: no prose, no code fence.',
    },
  ];
  const second = await callModel(context, { messages: retryMessages, responseFormat: { type: 'json' } });
  const secondParse = parseJsonReply(second.message.content, schema);
  if (secondParse.ok) return { ok: true, value: secondParse.value, calls: 2 };
  return { ok: false, error: secondParse.error, calls: 2, lastReply: second.message.content };
}
