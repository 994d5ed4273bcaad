/**
 * Parse a model reply as JSON and validate it with a zod schema.
 * @module
 */
import type { z } from 'zod';
import { extractJson } from './extract-json.js';

/** The outcome of {@link parseJsonReply}: the validated value, or a message saying what was wrong. */
export type JsonReplyParse<T> = { ok: true; value: T } | { ok: false; error: string };

/** Extracts JSON from `text` leniently and validates it; the error message is written to be shown to the model. */
export function parseJsonReply<T>(text: string, schema: z.ZodType<T>): JsonReplyParse<T> {
  const raw = extractJson(text);
  if (raw === undefined) {
    return { ok: false, error: 'The reply contains no parseable JSON object.' };
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, value: parsed.data };
  const problems = parsed.error.issues.map((issue) => {
    const where = issue.path.length ? issue.path.map(String).join('.') : '(root)';
    return `${where}: ${issue.message}`;
  });
  return { ok: false, error: `The JSON does not match the required shape: ${problems.join('; ')}.` };
}
