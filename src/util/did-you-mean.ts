/**
 * "Did you mean" for option objects: a misspelt key is named with its full path and the closest valid key, or with
 * the list of valid keys when none is close. Shared by every option parser, so each level reports it the same way.
 * @module
 * @internal
 */
import type { z } from 'zod';

/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`: optimal string alignment distance. */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The candidate closest to `key` when it is close enough to be a slip: case is ignored, and at most a third of the
 * longer name may differ (at least one edit), or one name is the other cut short (`keepRecent` for `keepRecentRounds`).
 * Far-off names get no suggestion, so none misleads.
 */
export function closestKey(key: string, candidates: readonly string[]): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  const typed = key.toLowerCase();
  for (const candidate of candidates) {
    const valid = candidate.toLowerCase();
    const distance = editDistance(typed, valid);
    const allowed = Math.max(1, Math.floor(Math.max(typed.length, valid.length) / 3));
    const shortened = Math.min(typed.length, valid.length) >= 3 && (valid.startsWith(typed) || typed.startsWith(valid));
    if ((distance <= allowed || shortened) && distance < valid.length && (!best || distance < best.distance)) {
      best = { candidate, distance };
    }
  }
  return best?.candidate;
}

/**
 * The message for an unknown key: `` `limits.maxIteratons` is not an option (did you mean `limits.maxIterations`?) ``,
 * or, when no valid key is close, the list of the valid keys at that level.
 * @param parent the path of the object holding the key (`limits`), or `''` at the top level.
 */
export function unknownKeyMessage(parent: string, key: string, known: readonly string[]): string {
  const full = (name: string) => `\`${parent ? `${parent}.` : ''}${name}\``;
  const suggestion = closestKey(key, known);
  if (suggestion !== undefined) return `${full(key)} is not an option (did you mean ${full(suggestion)}?)`;
  const valid = known.map((name) => `\`${name}\``).join(', ');
  return `${full(key)} is not an option; the options${parent ? ` of \`${parent}\`` : ''} are ${valid || '(none)'}`;
}

interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  options?: readonly z.ZodType[];
  keyType?: z.ZodType;
  entries?: Record<string, unknown>;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The schema with optional / nullable / default / prefault / catch / readonly / pipe (its input side) removed. */
function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (;;) {
    const def = defOf(current);
    const next = def.type === 'pipe' ? def.in : def.innerType;
    if (!next) return current;
    current = next;
  }
}

/** The object schemas a value at this node may match (an object, or the object members of a union). */
function objectSchemas(schema: z.ZodType): z.ZodType[] {
  const node = unwrap(schema);
  const def = defOf(node);
  if (def.type === 'object' || def.type === 'record') return [node];
  if (def.type === 'union') return (def.options ?? []).flatMap(objectSchemas);
  return [];
}

/** The keys an object or record-with-enum-keys schema accepts. */
function keysOf(schema: z.ZodType): string[] {
  const def = defOf(schema);
  if (def.type === 'object') return Object.keys(def.shape ?? {});
  const keyDef = def.keyType ? defOf(def.keyType) : undefined;
  return keyDef?.type === 'enum' ? Object.keys(keyDef.entries ?? {}) : [];
}

/** The child schema under `key`, in an object's shape or as a record's value type. */
function child(schema: z.ZodType, key: string): z.ZodType | undefined {
  const def = defOf(schema) as Def & { valueType?: z.ZodType };
  if (def.type === 'object') return def.shape?.[key];
  return keysOf(schema).includes(key) ? def.valueType : undefined;
}

/**
 * The keys accepted at `path` inside `schema`, walking through wrappers, unions and records; `undefined` when no
 * object lives there. Every option parser uses it to list the valid keys of the level a misspelt key is in.
 */
export function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] | undefined {
  let nodes = objectSchemas(schema);
  for (const segment of path) {
    nodes = nodes.flatMap((node) => {
      const next = child(node, String(segment));
      return next ? objectSchemas(next) : [];
    });
  }
  return nodes.length ? [...new Set(nodes.flatMap(keysOf))] : undefined;
}

/** What {@link describeIssues} needs besides the issues. */
export interface DescribeIssuesOptions {
  /** The schema that was parsed, to find the valid keys of the level an unknown key is in. */
  schema: z.ZodType;
  /** Prefix of every path named (`memory`, `managed`), for options parsed on their own; none at the top level. */
  prefix?: string;
  /** Keys accepted beside the schema's, by path (`''` for the top level), e.g. `{ '': ['tokenizer'] }`. */
  extraKeys?: Record<string, readonly string[]>;
}

/**
 * One readable line per problem: an unknown key becomes a "did you mean" with its full path, anything else
 * `` `path`: message ``. Only paths and key names are quoted, never option values (which may hold secrets).
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], options: DescribeIssuesOptions): string[] {
  const join = (path: readonly PropertyKey[]) => [options.prefix, ...path.map(String)].filter(Boolean).join('.');
  return issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const known = [
        ...(keysAt(options.schema, issue.path) ?? []),
        ...(options.extraKeys?.[issue.path.join('.')] ?? []),
      ];
      return issue.keys.map((key) => unknownKeyMessage(join(issue.path), key, known));
    }
    return [`\`${join(issue.path) || '(options)'}\`: ${issue.message}`];
  });
}
