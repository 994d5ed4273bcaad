/**
 * `mcpTools()`: connect to an MCP server and offer its tools to the harness, kept in step with the server's list.
 * @module
 */
import type { Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';
import { HarnessError } from '../errors.js';
import type { Tool, ToolContext, ToolOutput } from '../tools/types.js';
import { McpConnection } from './connection.js';
import { errorText, toToolOutput } from './convert-result.js';
import {
  type McpServer,
  type McpToolsOptions,
  parseMcpToolsArguments,
  type ResolvedMcpToolsOptions,
} from './options.js';
import { loadMcpSdk } from './sdk.js';
import { MAX_SCHEMA_DEPTH, nestingDepth, toHarnessTools } from './tool-adapter.js';

/**
 * The tools of one MCP server, live: `tools` follows the server's `listChanged` notifications, and `close()` ends the
 * connection (and stops a stdio server).
 */
export interface McpToolSet {
  /** The server's name as it reported it in the MCP handshake (else the program's name or the URL's host). */
  readonly server: string;
  /**
   * The server's tools as harness tools, as of the last listing. A new array replaces it after each change; pass it to
   * `createHarness({ tools })` for a fixed set, or use {@link McpToolRegistry} so every executor loop sees the latest.
   */
  readonly tools: readonly Tool[];
  /** Lists the server's tools again now; resolves with the new `tools`. */
  refresh(): Promise<readonly Tool[]>;
  /** Calls `listener` with the new `tools` after each change. Returns a function that removes it. */
  onToolsChanged(listener: (tools: readonly Tool[]) => void): () => void;
  /** Ends the connection and stops a stdio server; afterwards its tools answer with an error. Idempotent. */
  close(): Promise<void>;
}

/**
 * Connects to an MCP server and returns its tools as harness tools.
 *
 * `server` is `{ command, args?, env?, cwd? }` to start a program that speaks MCP over stdio, or `{ url, headers? }`
 * for a Streamable HTTP endpoint. Needs the optional peer `@modelcontextprotocol/sdk`; without it this rejects with
 * `missing-peer-dependency`. Bad options reject with `invalid-options`; a server that cannot be started or reached
 * rejects with `connection`. See docs/mcp.md.
 *
 * @example
 * ```ts
 * const fs = await mcpTools({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', dir] }, { prefix: 'fs_' });
 * try {
 *   const harness = createHarness({ backend, tools: [...builtinTools(), ...fs.tools] });
 *   await harness.run('Summarise the notes in the project folder.');
 * } finally {
 *   await fs.close();
 * }
 * ```
 */
export async function mcpTools(server: McpServer, options: McpToolsOptions = {}): Promise<McpToolSet> {
  const parsed = parseMcpToolsArguments(server, options);
  const sdk = await loadMcpSdk();
  const set = new LiveToolSet(parsed.options);
  const connection = await McpConnection.open({
    server: parsed.server,
    options: parsed.options,
    sdk,
    onToolListChanged: () => void set.refresh().catch(() => undefined),
  });
  try {
    await set.attach(connection);
  } catch (error) {
    await connection.close();
    throw error;
  }
  return set;
}

/** The set behind {@link McpToolSet}: one connection, the current tools, and single-flight refreshes. */
class LiveToolSet implements McpToolSet {
  private connection: McpConnection | undefined;
  private current: readonly Tool[] = [];
  private fingerprint = '';
  private readonly listeners = new Set<(tools: readonly Tool[]) => void>();
  private running: Promise<readonly Tool[]> | undefined;
  private again = false;

  constructor(private readonly options: ResolvedMcpToolsOptions) {}

  get server(): string {
    return this.connection?.label ?? '';
  }

  get tools(): readonly Tool[] {
    return this.current;
  }

  async attach(connection: McpConnection): Promise<void> {
    this.connection = connection;
    await this.refresh();
  }

  refresh(): Promise<readonly Tool[]> {
    // A notification during a refresh means the list may have changed after it was read: list once more after it.
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.listUntilSettled().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  onToolsChanged(listener: (tools: readonly Tool[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    await this.connection?.close();
  }

  private async listUntilSettled(): Promise<readonly Tool[]> {
    do {
      this.again = false;
      await this.apply(await this.requireConnection().listTools());
    } while (this.again);
    return this.current;
  }

  private async apply(infos: McpToolInfo[]): Promise<void> {
    const fingerprint = JSON.stringify(
      infos.map(({ name, description, title, inputSchema, annotations }) => [
        name,
        description,
        title,
        // A schema too deep to show is shown as "an object" whatever it holds (and too deep to stringify safely).
        nestingDepth(inputSchema) > MAX_SCHEMA_DEPTH ? 'too deep' : inputSchema,
        annotations,
      ]),
    );
    if (fingerprint === this.fingerprint) return;
    this.fingerprint = fingerprint;
    const connection = this.requireConnection();
    this.current = Object.freeze(
      await toHarnessTools(
        infos,
        { prefix: this.options.prefix, serverLabel: connection.label, timeoutMs: this.options.timeoutMs },
        (name, args, context) => this.call(name, args, context),
      ),
    );
    for (const listener of this.listeners) {
      try {
        listener(this.current);
      } catch {
        // A listener's bug must not break the connection or the other listeners.
      }
    }
  }

  private async call(name: string, args: Record<string, unknown>, context: ToolContext): Promise<ToolOutput> {
    const result = await this.requireConnection().callTool(name, args, context.signal);
    // A server announces a list change before it answers the call that caused it: finish that refresh first, so the
    // next executor loop is offered the new list.
    await this.running?.catch(() => undefined);
    if (result.isError) throw new HarnessError('invalid-response', errorText(result));
    return toToolOutput(result);
  }

  private requireConnection(): McpConnection {
    if (!this.connection) throw new HarnessError('internal', 'The MCP tool set is not connected yet.');
    return this.connection;
  }
}
