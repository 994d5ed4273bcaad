/**
 * One live connection to one MCP server: connects, lists tools, calls them with cancellation, turns every transport
 * failure into an error that names the server, and restarts a crashed stdio server once.
 * @module
 * @internal
 */
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';
import { HarnessError } from '../errors.js';
import type { ResolvedMcpServer, ResolvedMcpToolsOptions } from './options.js';
import { describeExit, type ProcessExit, ProcessTransport } from './process-transport.js';
import type { McpSdk } from './sdk.js';

/** A crashed stdio server is started again this many times per tool set (the issue: "restarted once"). */
const MAX_RESTARTS = 1;
/** Without a `timeoutMs` option the harness's tool timeout aborts the call; the SDK's own 60 s default must not fire first. */
const NO_TIMEOUT_MS = 2_147_483_647;
/** A server that keeps paginating is cut off here, so a hostile one cannot make listing endless. */
const MAX_LIST_PAGES = 100;

/** What a {@link McpConnection} needs. @internal */
export interface ConnectionSettings {
  server: ResolvedMcpServer;
  options: ResolvedMcpToolsOptions;
  sdk: McpSdk;
  /** Called when the server announces that its tool list changed. */
  onToolListChanged: () => void;
}

interface Session {
  client: Client;
  transport: Transport;
  /** Set when the transport closed without `close()` being called: the server crashed or hung up. */
  crashed: boolean;
}

/** A connection to one MCP server. Open it with {@link McpConnection.open}. @internal */
export class McpConnection {
  /** How the server is named in messages: its `serverInfo.name`, else the program's base name or the URL's host. */
  label: string;
  private session: Session | undefined;
  private restarts = 0;
  private closed = false;
  private lastExit: ProcessExit | undefined;
  /** Why the restart failed, when it did. */
  private restartFailure: string | undefined;
  private reconnecting: Promise<Session> | undefined;

  private constructor(private readonly settings: ConnectionSettings) {
    this.label = fallbackLabel(settings.server);
  }

  /** Starts or reaches the server and completes the MCP handshake; fails with a `connection` error naming the server. */
  static async open(settings: ConnectionSettings): Promise<McpConnection> {
    const connection = new McpConnection(settings);
    connection.session = await connection.connect();
    const info = connection.session.client.getServerVersion();
    if (info?.name) connection.label = info.name;
    return connection;
  }

  /** Every tool the server lists (all pages); tools that can only run as MCP tasks are left out. */
  async listTools(): Promise<McpToolInfo[]> {
    const { client } = await this.ready('list its tools');
    const tools: McpToolInfo[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await client
        .listTools(cursor === undefined ? {} : { cursor }, { timeout: this.settings.options.connectTimeoutMs })
        .catch((error: unknown) => {
          throw this.failure(error, 'listing its tools', this.settings.options.connectTimeoutMs);
        });
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return tools.filter((tool) => tool.execution?.taskSupport !== 'required');
  }

  /**
   * Calls one tool. Resolves with the server's result (also an `isError` one); rejects with a `HarnessError` that
   * says what happened (the server crashed, timed out, refused the call) and, on abort, with the signal's reason.
   */
  async callTool(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    const session = await this.ready(`run "${name}"`);
    signal.throwIfAborted();
    try {
      const result = await session.client.callTool({ name, arguments: args }, undefined, {
        signal,
        timeout: this.settings.options.timeoutMs ?? NO_TIMEOUT_MS,
      });
      return result as CallToolResult;
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw this.failure(error, `the call to "${name}"`, this.settings.options.timeoutMs, session);
    }
  }

  /** Ends the connection and stops a stdio server (stdin closed, then SIGTERM, then SIGKILL). Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    const session = this.session;
    this.session = undefined;
    const pending = await this.reconnecting?.catch(() => undefined);
    for (const open of new Set([session, pending])) {
      if (!open) continue;
      // A Streamable HTTP session is ended on the server too (DELETE), so it does not linger there.
      const { transport } = open;
      if ('terminateSession' in transport && typeof transport.terminateSession === 'function') {
        await (transport.terminateSession as () => Promise<void>).call(transport).catch(() => undefined);
      }
      await open.client.close().catch(() => undefined);
    }
  }

  /** The live session; restarts a crashed stdio server once, and otherwise says why the server is unavailable. */
  private async ready(purpose: string): Promise<Session> {
    if (this.closed) {
      throw new HarnessError(
        'invalid-input',
        `Cannot ${purpose} on MCP server "${this.label}": its tool set was closed. Create a new one with mcpTools().`,
      );
    }
    const session = this.session;
    if (session && !session.crashed) return session;
    if (this.reconnecting) return this.reconnecting;
    const stdio = 'command' in this.settings.server;
    if (!stdio || this.restarts >= MAX_RESTARTS) {
      const history = !stdio
        ? 'The connection was lost.'
        : this.restartFailure
          ? `Restarting it failed: ${this.restartFailure}`
          : 'It was restarted once already and is not started again.';
      throw new HarnessError(
        'connection',
        `MCP server "${this.label}" is not available, so it cannot ${purpose}: it ${describeExit(this.lastExit)}\n${history} Use other tools.`,
      );
    }
    this.restarts += 1;
    this.reconnecting = this.connect();
    try {
      this.session = await this.reconnecting;
      return this.session;
    } catch (error) {
      this.restartFailure = error instanceof Error ? error.message : String(error);
      throw error;
    } finally {
      this.reconnecting = undefined;
    }
  }

  private async connect(): Promise<Session> {
    const { sdk, server, options } = this.settings;
    const client = new sdk.Client({ name: options.clientName, version: '1.0.0' }, { capabilities: {} });
    const transport: Transport =
      'command' in server
        ? new ProcessTransport(
            {
              command: server.command,
              args: server.args ?? [],
              // The SDK's safe default (HOME, LOGNAME, PATH, SHELL, TERM, USER), never the host's whole environment.
              env: { ...sdk.getDefaultEnvironment(), ...server.env },
              cwd: server.cwd,
            },
            sdk,
          )
        : new sdk.StreamableHTTPClientTransport(new URL(server.url), {
            requestInit: { headers: { ...server.headers } },
            // Said explicitly: the headers carry credentials, which must never follow a redirect to another origin.
            redirectPolicy: 'same-origin',
          });
    const session: Session = { client, transport, crashed: false };
    client.onclose = () => {
      if (this.closed) return;
      session.crashed = true;
      this.lastExit = transport instanceof ProcessTransport ? transport.exit : undefined;
    };
    // Also while a restarted session is still being set up: a server may announce changes right after the handshake.
    client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => {
      if (!this.closed) this.settings.onToolListChanged();
    });
    try {
      await client.connect(transport, { timeout: options.connectTimeoutMs });
    } catch (error) {
      await client.close().catch(() => undefined);
      const exit = transport instanceof ProcessTransport ? transport.exit : undefined;
      const detail = exit ? `it ${describeExit(exit)}` : describeError(error);
      throw new HarnessError('connection', `Could not connect to MCP server "${this.label}": ${detail}`, {
        cause: error,
      });
    }
    return session;
  }

  /** The error a failed request becomes: it names the server and what happened, never the server's options. */
  private failure(error: unknown, what: string, timeoutMs: number | undefined, session = this.session): HarnessError {
    const { McpError, ErrorCode } = this.settings.sdk;
    const exited = session?.transport instanceof ProcessTransport && session.transport.exit !== undefined;
    if (session?.crashed || exited || (error instanceof McpError && error.code === ErrorCode.ConnectionClosed)) {
      const next = !('command' in this.settings.server)
        ? 'The connection was lost; use other tools.'
        : this.restarts < MAX_RESTARTS
          ? 'It is started again on the next call.'
          : 'It is not started again; use other tools.';
      return new HarnessError(
        'connection',
        `MCP server "${this.label}" stopped during ${what}: it ${describeExit(this.lastExit)}\n${next}`,
        { cause: error },
      );
    }
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      return new HarnessError(
        'timeout',
        `MCP server "${this.label}" did not finish ${what} within ${timeoutMs ?? 'the allowed'} ms; the request was cancelled. Try a smaller step.`,
        { cause: error },
      );
    }
    if (error instanceof McpError) {
      return new HarnessError('invalid-response', `MCP server "${this.label}" refused ${what}: ${error.message}`, {
        cause: error,
      });
    }
    return new HarnessError(
      'connection',
      `MCP server "${this.label}" could not be reached for ${what}: ${describeError(error)}`,
      {
        cause: error,
      },
    );
  }
}

function fallbackLabel(server: ResolvedMcpServer): string {
  // Only the program's name or the URL's host: arguments and query strings may carry tokens.
  return 'command' in server ? path.basename(server.command) : new URL(server.url).host;
}

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? ` (${error.cause.message})` : '';
  return `${error.message}${cause}`;
}
