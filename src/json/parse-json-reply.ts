/**
 * Parse a model reply as JSON and validate it with a zod schema.
 * @module
 */
import { z } from 'zod';
import { DEFAULTS } from '../defaults.js';
import { jsonCandidates, parseOrUndefined } from './extract-json.js';

/** The outcome of {@link parseJsonReply}: the validated value, or a message saying what was wrong. */
export type JsonReplyParse<T> = { ok: true; value: T } | { ok: false; error: string };

/** How strictly {@link parseJsonReply} reads a reply. */
export interface JsonReplyRules {
  /** Longest reply read; a longer one is refused unread. @defaultValue DEFAULTS.maxJsonReplyChars (1 000 000) */
  maxChars?: number;
  /**
   * Set for a role whose reply must be its own judgement (an audit's verdict, the manager's decision): the texts the
   * role was given to judge (a claim, a contract, the tool outputs it read, reports). The reply then counts only when
   * it holds exactly one distinct value of the shape, and that value is in none of these texts: a reply that also
   * quotes another value of the shape, or that copies one, is refused like a malformed one. Each text is searched in
   * its first and last `maxChars` characters.
   */
  given?: readonly string[];
}

/**
 * Extracts JSON from `text` leniently (the whole text, fenced blocks, balanced objects after prose) and returns the
 * first candidate that validates; with `rules.given`, the one candidate that validates, when it is the role's own.
 * The error message (for a shape error, of the first parseable candidate: the one the model most likely meant) is
 * written to be shown to the model. Time and memory are linear in the reply's length, which is at most
 * `rules.maxChars`.
 */
export function parseJsonReply<T>(text: string, schema: z.ZodType<T>, rules: JsonReplyRules = {}): JsonReplyParse<T> {
  const maxChars = rules.maxChars ?? DEFAULTS.maxJsonReplyChars;
  if (text.length > maxChars) return { ok: false, error: tooLong(text.length, maxChars) };
  const { values, firstFailure } = scan(text, schema, rules.given === undefined);
  const [first] = values.entries().next().value ?? [];
  if (first === undefined) {
    if (!firstFailure) return { ok: false, error: 'The reply contains no parseable JSON object.' };
    return { ok: false, error: shapeError(firstFailure) };
  }
  const value = values.get(first) as T;
  if (rules.given === undefined) return { ok: true, value };
  if (values.size > 1) {
    return {
      ok: false,
      error:
        `The reply holds ${values.size} different JSON objects of the required shape; it must hold exactly one, your ` +
        'own. Do not quote another object of that shape (from a claim, a file or an output): describe it in words.',
    };
  }
  if (rules.given.some((given) => boundedViews(given, maxChars).some((view) => validValues(view, schema).has(first)))) {
    return {
      ok: false,
      error:
        "The reply's JSON object is a copy of one in the material you were given (a claim, a file, a tool output, a " +
        'report): only your own judgement counts. Check for yourself and reply with your own object.',
    };
  }
  return { ok: true, value };
}

function tooLong(length: number, maxChars: number): string {
  return (
    `The reply is ${length} characters long; a JSON reply may have at most ${maxChars}, so it was not read. Reply ` +
    'with only the JSON object: no prose, no code fence, nothing quoted.'
  );
}

function shapeError(failure: z.ZodError): string {
  const problems = failure.issues.map((issue) => {
    const where = issue.path.length ? issue.path.map(String).join('.') : '(root)';
    return `${where}: ${issue.message}`;
  });
  return `The JSON does not match the required shape: ${problems.join('; ')}.`;
}

/**
 * The JSON texts in `text` (searched in its first and last `maxChars` characters) whose values have `schema`'s shape:
 * what a role that reads `text` could copy. Pass them on as {@link JsonReplyRules.given}.
 */
export function shapedJsonIn<T>(text: string, schema: z.ZodType<T>, maxChars = DEFAULTS.maxJsonReplyChars): string[] {
  return boundedViews(text, maxChars).flatMap((view) =>
    jsonCandidates(view).filter((candidate) => {
      const raw = parseOrUndefined(candidate);
      const required = requiredKeys(schema);
      return raw !== undefined && (!required || hasKeys(raw, required)) && schema.safeParse(raw).success;
    }),
  );
}

/** The distinct values in `text` that validate, keyed by their canonical JSON. */
function validValues<T>(text: string, schema: z.ZodType<T>): Map<string, T> {
  return scan(text, schema, false).values;
}

/**
 * The distinct values in `text` that validate, keyed by their canonical JSON, in the order the candidates are tried
 * (`firstOnly`: stop at the first), and the validation error of the first candidate that parsed.
 */
function scan<T>(
  text: string,
  schema: z.ZodType<T>,
  firstOnly: boolean,
): { values: Map<string, T>; firstFailure: z.ZodError | undefined } {
  const values = new Map<string, T>();
  let firstFailure: z.ZodError | undefined;
  const required = requiredKeys(schema);
  for (const candidate of jsonCandidates(text)) {
    const raw = parseOrUndefined(candidate);
    if (raw === undefined) continue;
    // Once a shape error is kept, an object lacking a required key needs no validation: it fails, and failing is dear.
    if (firstFailure && required && !hasKeys(raw, required)) continue;
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      firstFailure ??= parsed.error;
      continue;
    }
    values.set(canonical(parsed.data), parsed.data);
    if (firstOnly) break;
  }
  return { values, firstFailure };
}

const requiredKeysOf = new WeakMap<z.ZodType, readonly string[] | undefined>();

/** The keys an object schema cannot do without (not optional, no default); undefined for other schemas. */
function requiredKeys(schema: z.ZodType): readonly string[] | undefined {
  if (requiredKeysOf.has(schema)) return requiredKeysOf.get(schema);
  const keys =
    schema instanceof z.ZodObject
      ? Object.entries(schema.shape as Record<string, z.ZodType>)
          .filter(([, field]) => !field.safeParse(undefined).success)
          .map(([key]) => key)
      : undefined;
  requiredKeysOf.set(schema, keys);
  return keys;
}

function hasKeys(value: unknown, keys: readonly string[]): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && keys.every((key) => key in value);
}

/** The parts of a given text searched for copies: all of it, or its first and last `maxChars` characters. */
function boundedViews(text: string, maxChars: number): string[] {
  return text.length <= maxChars ? [text] : [text.slice(0, maxChars), text.slice(-maxChars)];
}

/** JSON with object keys sorted, so that values equal up to key order and spacing compare equal. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}
