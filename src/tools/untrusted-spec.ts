/**
 * A tool spec whose words come from outside (an MCP server's description and schema) as the model is shown it:
 * through the one datamark path, like every other untrusted text.
 * @module
 * @internal
 */
import type { ToolSpec } from '../backend/types.js';
import type { DataMark } from '../prompts/datamark.js';

/** Schema keys whose values are prose for the model: wrapped between the run's markers. */
const PROSE_KEYS = new Set(['description', 'title']);

/** Deeper schema parts are dropped: the MCP adapter never offers one this deep. */
const MAX_DEPTH = 128;

/**
 * `spec` with its description between the run's data markers, every `description` and `title` in its schema too,
 * and every other string and key of the schema neutralised (a marker-like sequence in it made inert; nothing else
 * changes). The name is left as it is: the model must call the tool by it.
 * @internal
 */
export function markUntrustedSpec(spec: ToolSpec, mark: DataMark): ToolSpec {
  return {
    name: spec.name,
    description: `Described by its provider (untrusted): ${mark.inline(spec.description)}`,
    inputSchema: markSchema(spec.inputSchema, mark, 0) as Record<string, unknown>,
  };
}

function markSchema(value: unknown, mark: DataMark, depth: number): unknown {
  if (typeof value === 'string') return mark.neutralize(value);
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_DEPTH) return {};
  if (Array.isArray(value)) return value.map((item) => markSchema(item, mark, depth + 1));
  const marked: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    marked[mark.neutralize(key)] =
      PROSE_KEYS.has(key) && typeof item === 'string' ? mark.inline(item) : markSchema(item, mark, depth + 1);
  }
  return marked;
}
