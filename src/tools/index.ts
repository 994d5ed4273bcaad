/**
 * Tools: define them with `defineTool`, offer them through a `ToolRegistry`.
 * @module
 */
export { defineTool, isZodSchema, TOOL_NAME_PATTERN, type ToolDefinition } from './define-tool.js';
export {
  RESERVED_TOOL_NAMES,
  ToolRegistry,
  toWorkspaceRelative,
  type InvokeOptions,
  type ToolRegistryOptions,
} from './registry.js';
export type { ImagePart, ObservationKind, Tool, ToolContext, ToolInvocation, ToolOutput } from './types.js';
