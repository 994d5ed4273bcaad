/**
 * The options of {@link mcpTools}: which server to start or reach, and how its tools are offered. Parsed once, with a
 * "did you mean" for misspelt keys, so a bad value fails at `mcpTools()` and never halfway through a run.
 * @module
 */
import { z } from 'zod';
import { HarnessError } from '../errors.js';
import { describeIssues } from '../util/did-you-mean.js';

const MAX_TIMER_MS = 2_147_483_647;

const StdioServerSchema = z.strictObject({
  /** The program to start (resolved on `PATH` like a shell would, but run without a shell). */
  command: z.string().trim().min(1, 'must be a non-empty program name or path'),
  args: z.array(z.string()).optional(),
  /** Added to the small default environment (HOME, LOGNAME, PATH, SHELL, TERM, USER); the rest of yours is not passed. */
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().min(1).optional(),
});

const HttpServerSchema = z.strictObject({
  /** The Streamable HTTP endpoint, e.g. `https://example.com/mcp`. */
  url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }),
  /** Sent with every request (e.g. `Authorization`); never shown in errors or events. */
  headers: z.record(z.string(), z.string()).optional(),
});

/** Where the MCP server is: a program started over stdio, or a Streamable HTTP endpoint. */
export const McpServerSchema = z.union([StdioServerSchema, HttpServerSchema], {
  error: 'must be { command, args?, env?, cwd? } (stdio) or { url, headers? } (Streamable HTTP)',
});

/** An MCP server started as a child process that speaks MCP over its stdin and stdout. */
export type McpStdioServer = z.input<typeof StdioServerSchema>;
/** An MCP server reached over Streamable HTTP. */
export type McpHttpServer = z.input<typeof HttpServerSchema>;
/** The `server` argument of {@link mcpTools}. */
export type McpServer = McpStdioServer | McpHttpServer;

/** The options schema of {@link mcpTools}. */
export const McpToolsOptionsSchema = z.strictObject({
  /**
   * Put before every tool name (`fs_` makes `read_file` `fs_read_file`), so tools of several servers and the built-in
   * ones do not clash. @defaultValue '' (no prefix)
   */
  prefix: z
    .string()
    .regex(/^[a-zA-Z0-9_-]{0,32}$/, 'must be at most 32 letters, digits, "_" or "-"')
    .default(''),
  /**
   * Per-call timeout in milliseconds; the call is cancelled on the server when it fires. Absent, the harness's tool
   * timeout applies (`limits.toolTimeoutMs`, 120 s by default).
   */
  timeoutMs: z.number().int().positive().max(MAX_TIMER_MS).optional(),
  /** How long connecting (starting the server, the MCP handshake, listing tools) may take. @defaultValue 30 000 */
  connectTimeoutMs: z.number().int().positive().max(MAX_TIMER_MS).default(30_000),
  /** The client name the server sees in the MCP handshake. @defaultValue 'horizon-harness' */
  clientName: z.string().trim().min(1).max(200).default('horizon-harness'),
});

/** Options of {@link mcpTools}. */
export type McpToolsOptions = z.input<typeof McpToolsOptionsSchema>;

/** @internal */
export type ResolvedMcpServer = z.output<typeof McpServerSchema>;
/** @internal */
export type ResolvedMcpToolsOptions = z.output<typeof McpToolsOptionsSchema>;

/**
 * Validates the server and the options; a problem is an `invalid-options` error naming every bad field (values are
 * never quoted: they may hold tokens).
 * @internal
 */
export function parseMcpToolsArguments(
  server: unknown,
  options: unknown,
): { server: ResolvedMcpServer; options: ResolvedMcpToolsOptions } {
  const problems: string[] = [];
  const parsedServer = McpServerSchema.safeParse(server);
  if (!parsedServer.success) problems.push(...describeServerIssues(server, parsedServer.error.issues));
  const parsedOptions = McpToolsOptionsSchema.safeParse(options ?? {});
  if (!parsedOptions.success) {
    problems.push(...describeIssues(parsedOptions.error.issues, { schema: McpToolsOptionsSchema, prefix: 'options' }));
  }
  if (!parsedServer.success || !parsedOptions.success) {
    throw new HarnessError('invalid-options', `mcpTools: invalid arguments.\n${problems.join('\n')}`);
  }
  return { server: parsedServer.data, options: parsedOptions.data };
}

/** A union's issues say little; check the member the value was meant to be (it has `url`, or not) for precise lines. */
function describeServerIssues(server: unknown, issues: readonly z.core.$ZodIssue[]): string[] {
  if (typeof server !== 'object' || server === null) {
    return issues.map(() => '`server`: must be { command, args?, env?, cwd? } or { url, headers? }').slice(0, 1);
  }
  const schema = 'url' in server ? HttpServerSchema : StdioServerSchema;
  const result = schema.safeParse(server);
  return result.success ? [] : describeIssues(result.error.issues, { schema, prefix: 'server' });
}
