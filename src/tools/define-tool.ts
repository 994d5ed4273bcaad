import { z } from 'zod';
import { HarnessError } from '../errors.js';
import { isStandardSchema, type JsonSchema } from '../schema/schema-adapter.js';
import type { StandardSchemaV1 } from '../schema/standard-schema.js';
import { inputJsonSchema } from './input-json-schema.js';
import type { ObservationKind, Tool, ToolContext, ToolOutput } from './types.js';

export { isZodSchema } from '../schema/schema-adapter.js';

/** Allowed tool names: what every provider accepts for a function name. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * What {@link defineTool} takes; `execute` receives the input already validated by `input`. `Context` is the type of
 * the run's `context` the tool reads (`ToolContext.context`): annotate `execute`'s second parameter with
 * `ToolContext<YourContext>`.
 */
export interface ToolDefinition<S extends StandardSchemaV1, Context = unknown> {
  /** 1–64 letters, digits, `_` or `-`. */
  name: string;
  /** Tells the model when and how to use the tool. */
  description: string;
  /**
   * Schema of the input (an object schema), from any Standard Schema library: zod 4, zod 3.24+, Valibot, ArkType….
   * It validates every call and is sent to the model as JSON Schema (see {@link ToolDefinition.jsonSchema}).
   */
  input: S;
  /**
   * The input's JSON Schema, for a schema the harness cannot convert itself. Converted without it: zod 4, libraries
   * with Standard JSON Schema (`~standard.jsonSchema`), Valibot with `@valibot/to-json-schema` installed and zod 3
   * with `zod-to-json-schema` installed. When given, it is sent as is; `input` still validates.
   */
  jsonSchema?: JsonSchema;
  execute(input: StandardSchemaV1.InferOutput<S>, context: ToolContext<Context>): ToolOutput | Promise<ToolOutput>;
  /** @defaultValue false */
  readOnly?: boolean;
  /** @defaultValue 'text' */
  observation?: ObservationKind;
  /** Per-call timeout in milliseconds; the registry's default applies when absent. */
  timeoutMs?: number;
  /** Things the user should know before a run (e.g. that the tool runs unsandboxed); reported in `run-start`. */
  warnings?: readonly string[];
  /**
   * For a tool that runs programs (commands, code): whether they run inside a sandbox. The executor's system prompt
   * says so; leave it out for a tool that runs none.
   */
  sandbox?: { active: boolean };
}

const DefinitionSchema = z.object({
  name: z.string().regex(TOOL_NAME_PATTERN, 'must be 1–64 characters of letters, digits, "_" or "-"'),
  description: z.string().trim().min(1, 'must be a non-empty string'),
  input: z.custom<StandardSchemaV1>(
    isStandardSchema,
    'must be a schema of a Standard Schema library (zod 4, zod 3.24+, Valibot, ArkType…)',
  ),
  jsonSchema: z
    .custom<JsonSchema>(
      (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
      'must be a JSON Schema object',
    )
    .optional(),
  execute: z.custom<(...args: never[]) => unknown>((value) => typeof value === 'function', 'must be a function'),
  readOnly: z.boolean().default(false),
  observation: z.enum(['search', 'visit', 'file', 'text']).default('text'),
  timeoutMs: z.number().int().positive('must be a positive integer of milliseconds').max(2_147_483_647).optional(),
  warnings: z.array(z.string()).optional(),
  sandbox: z.object({ active: z.boolean() }).optional(),
});

/**
 * Defines a tool the model can call; the input type is inferred from the schema. A schema the harness cannot express
 * as JSON Schema, or whose JSON Schema is not an object's, throws `invalid-options` here, naming the fix.
 *
 * @example
 * ```ts
 * const add = defineTool({
 *   name: 'add',
 *   description: 'Adds two numbers.',
 *   input: z.object({ a: z.number(), b: z.number() }),
 *   readOnly: true,
 *   execute: ({ a, b }) => String(a + b),
 * });
 * ```
 */
export function defineTool<S extends StandardSchemaV1, Context = unknown>(
  definition: ToolDefinition<S, Context>,
): Tool<StandardSchemaV1.InferOutput<S>, Context> {
  const parsed = DefinitionSchema.safeParse(definition);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') || 'definition';
    const label = typeof definition?.name === 'string' ? ` "${definition.name}"` : '';
    throw new HarnessError(
      'invalid-options',
      `defineTool${label}: option "${field}" ${issue?.message ?? 'is invalid'}.`,
    );
  }
  const { readOnly, observation, timeoutMs, warnings, sandbox, jsonSchema } = parsed.data;
  const input = definition.input as StandardSchemaV1<unknown, StandardSchemaV1.InferOutput<S>>;
  // Converted here too, so that a schema the model cannot be shown fails where the tool is written.
  const converted = inputJsonSchema(definition.name, input, jsonSchema);
  if (!converted.ok) throw new HarnessError('invalid-options', `defineTool: ${converted.reason}.`);
  const tool: Tool<StandardSchemaV1.InferOutput<S>, Context> = {
    name: definition.name,
    description: definition.description,
    input,
    ...(jsonSchema ? { jsonSchema: converted.schema } : {}),
    readOnly,
    observation,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(warnings?.length ? { warnings: [...warnings] } : {}),
    ...(sandbox ? { sandbox: { active: sandbox.active } } : {}),
    execute: (input, context) => definition.execute(input, context),
  };
  return Object.freeze(tool);
}
