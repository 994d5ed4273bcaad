/**
 * Any Standard Schema as the harness uses schemas: converted to JSON Schema for the model, and validating values.
 * zod stays the harness's own schema library; an app's schemas may come from any library that implements the spec.
 * @module
 */
import { z } from 'zod';
import type { StandardSchemaV1 } from './standard-schema.js';

/** A JSON Schema object, as sent to the model. */
export type JsonSchema = Record<string, unknown>;

/** A typed result asked for by `run({ output })`: its schema and the JSON Schema the model is shown. @internal */
export interface OutputRequest {
  schema: StandardSchemaV1;
  jsonSchema: JsonSchema;
}

/** True for any Standard Schema (zod 3.24+, zod 4, Valibot, ArkType…), also one made by another copy of its library. */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  const props = (value as { '~standard'?: unknown })['~standard'];
  return (
    typeof props === 'object' &&
    props !== null &&
    (props as { version?: unknown }).version === 1 &&
    typeof (props as { validate?: unknown }).validate === 'function'
  );
}

/** True for a zod 4 schema, also one created by another copy of zod. */
export function isZodSchema(value: unknown): value is z.ZodType {
  return (
    typeof value === 'object' &&
    value !== null &&
    '_zod' in value &&
    typeof (value as { safeParse?: unknown }).safeParse === 'function'
  );
}

/** The outcome of {@link toJsonSchema}: the schema, or why there is none (a sentence naming the fix). */
export type JsonSchemaOutcome = { ok: true; schema: JsonSchema } | { ok: false; reason: string };

/** Which side of a schema with transforms is described: what it accepts (tool inputs) or what it produces. */
export type SchemaSide = 'input' | 'output';

/**
 * Converts a schema to JSON Schema, in this order: the `jsonSchema` given beside it; zod 4's `z.toJSONSchema`; the
 * library's Standard JSON Schema converter (`~standard.jsonSchema`); for Valibot `@valibot/to-json-schema` and for
 * zod 3 `zod-to-json-schema`, when the app installed them (loaded on first use). The `$schema` key is dropped.
 */
export function toJsonSchema(
  schema: StandardSchemaV1,
  side: SchemaSide,
  explicit?: JsonSchema,
  /** The option that takes the JSON Schema, as the fix names it. */
  option = 'jsonSchema',
): JsonSchemaOutcome {
  if (explicit !== undefined) return { ok: true, schema: withoutDialect(structuredClone(explicit)) };
  try {
    const converted = convert(schema, side);
    return converted
      ? { ok: true, schema: withoutDialect(converted) }
      : { ok: false, reason: noConverter(schema, option) };
  } catch (error) {
    return {
      ok: false,
      reason:
        `the ${vendorOf(schema)} schema cannot be expressed as JSON Schema ` +
        `(${error instanceof Error ? error.message : String(error)}); pass the JSON Schema as "${option}" beside it`,
    };
  }
}

function convert(schema: StandardSchemaV1, side: SchemaSide): JsonSchema | undefined {
  if (isZodSchema(schema)) return z.toJSONSchema(schema, { io: side, unrepresentable: 'any' }) as JsonSchema;
  const standard = schema['~standard'].jsonSchema;
  if (standard && typeof standard[side] === 'function') return standard[side]({ target: 'draft-2020-12' });
  const vendor = vendorOf(schema);
  if (vendor === 'valibot') {
    const converter = optionalModule<{ toJsonSchema(schema: unknown, config: object): JsonSchema }>(
      '@valibot/to-json-schema',
    );
    return converter?.toJsonSchema(schema, { typeMode: side, errorMode: 'ignore' });
  }
  if (vendor === 'zod') {
    // zod 3 (also `zod/v3`): no converter of its own.
    const converter = optionalModule<{ zodToJsonSchema(schema: unknown, options: object): JsonSchema }>(
      'zod-to-json-schema',
    );
    return converter?.zodToJsonSchema(schema, {
      $refStrategy: 'none',
      effectStrategy: side === 'input' ? 'input' : 'any',
    });
  }
  return undefined;
}

function noConverter(schema: StandardSchemaV1, option: string): string {
  const vendor = vendorOf(schema);
  const install =
    vendor === 'valibot'
      ? ', or install @valibot/to-json-schema'
      : vendor === 'zod'
        ? ' (zod 3 has no converter of its own), or install zod-to-json-schema'
        : '';
  return (
    `the harness cannot convert a ${vendor} schema to JSON Schema; pass the JSON Schema as "${option}" beside ` +
    `it${install}`
  );
}

function vendorOf(schema: StandardSchemaV1): string {
  const vendor = schema['~standard'].vendor;
  return typeof vendor === 'string' && vendor ? vendor : 'unknown';
}

function withoutDialect(schema: JsonSchema): JsonSchema {
  delete schema.$schema;
  return schema;
}

let requireOptional: NodeJS.Require | undefined;

/**
 * An optional peer, loaded on first use; undefined when the app did not install it. `node:module` itself is loaded
 * only then: importing the library loads no builtin it does not need at once.
 */
function optionalModule<T>(name: string): T | undefined {
  requireOptional ??= process.getBuiltinModule('node:module').createRequire(import.meta.url);
  try {
    return requireOptional(name) as T;
  } catch (error) {
    if ((error as { code?: unknown }).code === 'MODULE_NOT_FOUND') return undefined;
    throw error;
  }
}

/** One problem a schema found in a value: where (a dotted path, empty for the value itself) and what. */
export interface SchemaIssue {
  path: string;
  message: string;
}

/** The outcome of {@link validateWithSchema}. */
export type SchemaValidation<T> = { ok: true; value: T } | { ok: false; issues: SchemaIssue[] };

/** Validates `value` through the schema's `~standard.validate` (sync or async). A throwing schema rejects. */
export async function validateWithSchema<S extends StandardSchemaV1>(
  schema: S,
  value: unknown,
): Promise<SchemaValidation<StandardSchemaV1.InferOutput<S>>> {
  const result = await schema['~standard'].validate(value);
  if (result.issues) {
    return { ok: false, issues: result.issues.map((issue) => ({ path: pathOf(issue), message: issue.message })) };
  }
  return { ok: true, value: result.value as StandardSchemaV1.InferOutput<S> };
}

function pathOf(issue: StandardSchemaV1.Issue): string {
  return (issue.path ?? [])
    .map((segment) => String(typeof segment === 'object' && segment !== null ? segment.key : segment))
    .join('.');
}
