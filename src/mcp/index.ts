/**
 * `horizon-harness/mcp`: tools from MCP servers, through the official MCP TypeScript SDK (an optional peer
 * dependency, `@modelcontextprotocol/sdk`, loaded on first use). See docs/mcp.md.
 * @packageDocumentation
 */
export { McpToolRegistry } from './mcp-tool-registry.js';
export type { McpHttpServer, McpServer, McpStdioServer, McpToolsOptions } from './options.js';
export { mcpTools, type McpToolSet } from './tool-set.js';
