/**
 * A tool input's JSON Schema, as sent to the model: converted from its schema (or the `jsonSchema` given beside it)
 * and required to describe an object, because providers pass tool arguments as a JSON object.
 * @module
 */
import { toJsonSchema, type JsonSchema, type JsonSchemaOutcome } from '../schema/schema-adapter.js';
import type { StandardSchemaV1 } from '../schema/standard-schema.js';

/** The JSON Schema of tool `name`'s input, or why there is none (a sentence naming the fix). @internal */
export function inputJsonSchema(name: string, input: StandardSchemaV1, explicit?: JsonSchema): JsonSchemaOutcome {
  const converted = toJsonSchema(input, 'input', explicit);
  if (!converted.ok) return { ok: false, reason: `tool "${name}": ${converted.reason}` };
  if (converted.schema.type !== 'object') {
    return {
      ok: false,
      reason:
        `tool "${name}": its input must be an object schema (z.object({ … }), v.object({ … }), …), because providers ` +
        'pass tool arguments as a JSON object',
    };
  }
  return converted;
}
