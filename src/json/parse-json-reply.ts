/**
 * Parse a model reply as JSON and validate it with a zod schema.
 * @module
 */
import type { z } from 'zod';
import { parsedJsonCandidates } from './extract-json.js';

/** The outcome of {@link parseJsonReply}: the validated value, or a message saying what was wrong. */
export type JsonReplyParse<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * Extracts JSON from `text` leniently and returns the first candidate that validates; the error message (of the
 * first parseable candidate, the one the model most likely meant) is written to be shown to the model.
 */
export function parseJsonReply<T>(text: string, schema: z.ZodType<T>): JsonReplyParse<T> {
  let firstFailure: z.ZodError | undefined;
  for (const raw of parsedJsonCandidates(text)) {
    const parsed = schema.safeParse(raw);
    if (parsed.success) return { ok: true, value: parsed.data };
    firstFailure ??= parsed.error;
  }
  if (!firstFailure) return { ok: false, error: 'The reply contains no parseable JSON object.' };
  const problems = firstFailure.issues.map((issue) => {
    const where = issue.path.length ? issue.path.map(String).join('.') : '(root)';
    return `${where}: ${issue.message}`;
  });
  return { ok: false, error: `The JSON does not match the required shape: ${problems.join('; ')}.` };
}
