/**
 * An MCP server's tool as a harness {@link Tool}: a name every backend accepts, the server's JSON Schema offered to
 * the model as is, `readOnly` only when the server says `readOnlyHint: true`.
 * @module
 * @internal
 */
import type { Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Tool, ToolContext, ToolOutput } from '../tools/types.js';

const MAX_NAME = 64;
/**
 * With a `timeoutMs` option the registry's own timeout is set this much later, as a backstop: the MCP request's
 * timeout fires first, cancels the call on the server and says so.
 */
const REGISTRY_TIMEOUT_GRACE_MS = 1_000;
const MAX_TIMER_MS = 2_147_483_647;
/** Descriptions beyond this are cut: a server controls them, and they are sent with every model request. */
const MAX_DESCRIPTION_CHARS = 4_000;

/** Calls the server's tool by its own name. @internal */
export type CallServerTool = (
  serverToolName: string,
  args: Record<string, unknown>,
  context: ToolContext,
) => Promise<ToolOutput>;

/** Tools adapted between two yields to the event loop: a server may list thousands. */
const TOOLS_PER_CHUNK = 200;
/** Deeper input schemas are not offered as they are (see {@link inputSchemaOf}). */
export const MAX_SCHEMA_DEPTH = 64;

/**
 * Harness tools for the server's tools. Names are `prefix + name` with every character outside `[a-zA-Z0-9_-]`
 * replaced by `_` and cut to 64; a changed name that meets another gets `_2`, `_3`, … so each stays callable. The
 * descriptions and schemas are the server's words: the tools say so (`untrustedDescription`), and the harness shows
 * them to the model as untrusted data. Yields to the event loop every {@link TOOLS_PER_CHUNK} tools.
 * @internal
 */
export async function toHarnessTools(
  infos: readonly McpToolInfo[],
  settings: { prefix: string; serverLabel: string; timeoutMs: number | undefined },
  call: CallServerTool,
): Promise<Tool[]> {
  const { prefix, serverLabel, timeoutMs } = settings;
  const names = assignNames(infos.map((info) => prefix + info.name));
  const tools: Tool[] = [];
  for (const [index, info] of infos.entries()) {
    if (index > 0 && index % TOOLS_PER_CHUNK === 0) await new Promise((resolve) => setImmediate(resolve));
    const described = (info.description ?? info.title ?? '').trim();
    const description =
      described.length > MAX_DESCRIPTION_CHARS
        ? `${described.slice(0, MAX_DESCRIPTION_CHARS)}…`
        : described || `The tool "${info.name}" of the MCP server "${serverLabel}".`;
    const { input, warning } = inputSchemaOf(info.inputSchema);
    const tool: Tool<Record<string, unknown>> = {
      name: names[index] as string,
      description,
      input,
      readOnly: info.annotations?.readOnlyHint === true,
      observation: 'text',
      untrustedDescription: true,
      ...(timeoutMs === undefined ? {} : { timeoutMs: Math.min(timeoutMs + REGISTRY_TIMEOUT_GRACE_MS, MAX_TIMER_MS) }),
      ...(warning ? { warnings: [warning] } : {}),
      execute: (args, context) => call(info.name, args, context),
    };
    tools.push(Object.freeze(tool) as Tool);
  }
  return tools;
}

/**
 * The harness name of each wanted name, in order: acceptable names that are unique keep themselves; the others are
 * sanitised and get the first free `_2`, `_3`, … suffix. Linear: each base name remembers the next suffix to try.
 * `taken` starts empty (a test passes one that counts its lookups).
 * @internal
 */
export function assignNames(wanted: readonly string[], taken: Set<string> = new Set()): string[] {
  // Names that are acceptable as they are keep them; only the changed ones get a suffix when they collide.
  for (const name of wanted) if (sanitize(name) === name) taken.add(name);
  const claimed = new Set<string>();
  const nextSuffix = new Map<string, number>();
  return wanted.map((name) => {
    const chosen = sanitize(name) === name && !claimed.has(name) ? name : uniqueName(sanitize(name), taken, nextSuffix);
    taken.add(chosen);
    claimed.add(chosen);
    return chosen;
  });
}

/** `[a-zA-Z0-9_-]{1,64}`, what every provider accepts as a function name. @internal */
export function sanitize(name: string): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, MAX_NAME);
  return cleaned || 'tool';
}

function uniqueName(name: string, taken: ReadonlySet<string>, nextSuffix: Map<string, number>): string {
  if (!taken.has(name)) return name;
  for (let n = nextSuffix.get(name) ?? 2; ; n++) {
    const suffix = `_${n}`;
    const candidate = name.slice(0, MAX_NAME - suffix.length) + suffix;
    if (!taken.has(candidate)) {
      nextSuffix.set(name, n + 1);
      return candidate;
    }
  }
}

/** How deeply `value` nests objects and arrays (1 for a flat object), counted without recursion. */
export function nestingDepth(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop() as [unknown, number];
    if (typeof current !== 'object' || current === null) continue;
    deepest = Math.max(deepest, depth);
    if (deepest > MAX_SCHEMA_DEPTH) return deepest;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/**
 * A zod schema that accepts any JSON object and that `z.toJSONSchema` renders as exactly the server's schema, so the
 * registry offers the model what the server published. The server validates the arguments itself; its refusal comes
 * back as an error observation. (A draft-04 `id` is dropped: zod would treat it as a definition id.) A schema nested
 * deeper than {@link MAX_SCHEMA_DEPTH} levels (copying it would overflow the stack, and no model reads it) is offered
 * as "any object", with a warning the run reports.
 */
function inputSchemaOf(schema: McpToolInfo['inputSchema']): {
  input: z.ZodType<Record<string, unknown>>;
  warning?: string;
} {
  const anyObject = z.custom<Record<string, unknown>>(
    (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
    'must be a JSON object',
  );
  if (nestingDepth(schema) > MAX_SCHEMA_DEPTH) {
    return {
      input: anyObject.meta({ type: 'object' }),
      warning:
        `its input schema nests more than ${MAX_SCHEMA_DEPTH} levels, so the model is shown only "an object"; ` +
        'the server still checks the arguments. Flatten the schema on the server to show it.',
    };
  }
  const { id: _legacyId, ...published } = schema as Record<string, unknown>;
  return { input: anyObject.meta(structuredClone(published)) };
}
