/**
 * The one place that loads the official MCP TypeScript SDK, an optional peer dependency: only through
 * {@link loadPeer}, on first use, so `import 'horizon-harness'` never loads it and a missing SDK is a clear error.
 * @module
 * @internal
 */
import { loadPeer } from '../util/load-peer.js';

type ClientModule = typeof import('@modelcontextprotocol/sdk/client/index.js');
type HttpModule = typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js');
type StdioClientModule = typeof import('@modelcontextprotocol/sdk/client/stdio.js');
type StdioSharedModule = typeof import('@modelcontextprotocol/sdk/shared/stdio.js');
type TypesModule = typeof import('@modelcontextprotocol/sdk/types.js');

/** The parts of the SDK this subpath uses. @internal */
export interface McpSdk {
  Client: ClientModule['Client'];
  StreamableHTTPClientTransport: HttpModule['StreamableHTTPClientTransport'];
  getDefaultEnvironment: StdioClientModule['getDefaultEnvironment'];
  ReadBuffer: StdioSharedModule['ReadBuffer'];
  serializeMessage: StdioSharedModule['serializeMessage'];
  ToolListChangedNotificationSchema: TypesModule['ToolListChangedNotificationSchema'];
  McpError: TypesModule['McpError'];
  ErrorCode: TypesModule['ErrorCode'];
}

const PACKAGE = '@modelcontextprotocol/sdk';

/** Loads the SDK's modules; a missing SDK throws `missing-peer-dependency` naming the package. @internal */
export async function loadMcpSdk(): Promise<McpSdk> {
  const [client, http, stdioClient, stdioShared, types] = await loadPeer(PACKAGE, 'mcp', () =>
    Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
      import('@modelcontextprotocol/sdk/client/stdio.js'),
      import('@modelcontextprotocol/sdk/shared/stdio.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ]),
  );
  return {
    Client: client.Client,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    getDefaultEnvironment: stdioClient.getDefaultEnvironment,
    ReadBuffer: stdioShared.ReadBuffer,
    serializeMessage: stdioShared.serializeMessage,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
    McpError: types.McpError,
    ErrorCode: types.ErrorCode,
  };
}
