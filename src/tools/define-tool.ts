import { z } from 'zod';
import { HarnessError } from '../errors.js';
import type { ObservationKind, Tool, ToolContext, ToolOutput } from './types.js';

/** Allowed tool names: what every provider accepts for a function name. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** What {@link defineTool} takes; `execute` receives the input already validated by `input`. */
export interface ToolDefinition<S extends z.ZodType> {
  /** 1–64 letters, digits, `_` or `-`. */
  name: string;
  /** Tells the model when and how to use the tool. */
  description: string;
  /** zod schema of the input (an object schema); sent to the model as JSON Schema. */
  input: S;
  execute(input: z.output<S>, context: ToolContext): ToolOutput | Promise<ToolOutput>;
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
  input: z.custom<z.ZodType>(isZodSchema, 'must be a zod 4 schema'),
  execute: z.custom<(...args: never[]) => unknown>((value) => typeof value === 'function', 'must be a function'),
  readOnly: z.boolean().default(false),
  observation: z.enum(['search', 'visit', 'file', 'text']).default('text'),
  timeoutMs: z.number().int().positive('must be a positive integer of milliseconds').max(2_147_483_647).optional(),
  warnings: z.array(z.string()).optional(),
  sandbox: z.object({ active: z.boolean() }).optional(),
});

/**
 * Defines a tool the model can call; the input type is inferred from the zod schema.
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
export function defineTool<S extends z.ZodType>(definition: ToolDefinition<S>): Tool<z.output<S>> {
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
  const { readOnly, observation, timeoutMs, warnings, sandbox } = parsed.data;
  const tool: Tool<z.output<S>> = {
    name: definition.name,
    description: definition.description,
    input: definition.input as z.ZodType<z.output<S>>,
    readOnly,
    observation,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(warnings?.length ? { warnings: [...warnings] } : {}),
    ...(sandbox ? { sandbox: { active: sandbox.active } } : {}),
    execute: (input, context) => definition.execute(input, context),
  };
  return Object.freeze(tool);
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
