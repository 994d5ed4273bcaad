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

/**
 * Harness tools for the server's tools. Names are `prefix + name` with every character outside `[a-zA-Z0-9_-]`
 * replaced by `_` and cut to 64; a changed name that meets another gets `_2`, `_3`, … so each stays callable.
 * @internal
 */
export function toHarnessTools(
  infos: readonly McpToolInfo[],
  settings: { prefix: string; serverLabel: string; timeoutMs: number | undefined },
  call: CallServerTool,
): Tool[] {
  const { prefix, serverLabel, timeoutMs } = settings;
  // Names that are acceptable as they are keep them; only the changed ones get a suffix when they collide.
  const taken = new Set(infos.map((info) => prefix + info.name).filter((name) => sanitize(name) === name));
  const claimed = new Set<string>();
  return infos.map((info) => {
    const wanted = prefix + info.name;
    const name = sanitize(wanted) === wanted && !claimed.has(wanted) ? wanted : uniqueName(sanitize(wanted), taken);
    taken.add(name);
    claimed.add(name);
    const described = (info.description ?? info.title ?? '').trim();
    const description =
      described.length > MAX_DESCRIPTION_CHARS
        ? `${described.slice(0, MAX_DESCRIPTION_CHARS)}…`
        : described || `The tool "${info.name}" of the MCP server "${serverLabel}".`;
    const tool: Tool<Record<string, unknown>> = {
      name,
      description,
      input: inputSchemaOf(info.inputSchema),
      readOnly: info.annotations?.readOnlyHint === true,
      observation: 'text',
      ...(timeoutMs === undefined ? {} : { timeoutMs: Math.min(timeoutMs + REGISTRY_TIMEOUT_GRACE_MS, MAX_TIMER_MS) }),
      execute: (args, context) => call(info.name, args, context),
    };
    return Object.freeze(tool) as Tool;
  });
}

/** `[a-zA-Z0-9_-]{1,64}`, what every provider accepts as a function name. @internal */
export function sanitize(name: string): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, MAX_NAME);
  return cleaned || 'tool';
}

function uniqueName(name: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name)) return name;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const candidate = name.slice(0, MAX_NAME - suffix.length) + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}

/**
 * A zod schema that accepts any JSON object and that `z.toJSONSchema` renders as exactly the server's schema, so the
 * registry offers the model what the server published. The server validates the arguments itself; its refusal comes
 * back as an error observation. (A draft-04 `id` is dropped: zod would treat it as a definition id.)
 */
function inputSchemaOf(schema: McpToolInfo['inputSchema']): z.ZodType<Record<string, unknown>> {
  const { id: _legacyId, ...published } = schema as Record<string, unknown>;
  return z
    .custom<Record<string, unknown>>(
      (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
      'must be a JSON object',
    )
    .meta(structuredClone(published));
}
