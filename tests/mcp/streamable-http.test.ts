import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { HarnessError } from '../../src/errors.js';
import { mcpTools } from '../../src/mcp/index.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { callOf, EVERYTHING_BIN, freePort, open, startProcess, toolContext } from './helpers.js';

/** server-everything in its Streamable HTTP mode on a free port; resolves once it listens. */
async function startHttpEverything(): Promise<{ child: ChildProcess; url: string }> {
  for (;;) {
    const port = await freePort();
    const child = startProcess(EVERYTHING_BIN, ['streamableHttp'], { PORT: String(port) });
    const started = await new Promise<boolean>((resolve) => {
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('listening on port')) resolve(true);
      });
      child.once('exit', () => resolve(false)); // the port was taken in between: try another
    });
    if (started) return { child, url: `http://127.0.0.1:${port}/mcp` };
  }
}

describe('mcpTools over Streamable HTTP (server-everything)', () => {
  it('lists and calls tools over HTTP', async () => {
    const { url } = await startHttpEverything();
    const set = await open({ url, headers: { 'X-Test': 'yes' } }, { prefix: 'web_' });
    expect(set.server).toBe('mcp-servers/everything');
    const registry = new ToolRegistry([...set.tools]);
    expect(registry.has('web_echo')).toBe(true);
    const result = await registry.invoke(callOf('web_echo', { message: 'over http' }), toolContext());
    expect(result.isError).toBe(false);
    expect(result.text).toContain('over http');
  });

  it('a server that went away makes an error observation, not a crashed run', async () => {
    const { child, url } = await startHttpEverything();
    const set = await open({ url });
    const registry = new ToolRegistry([...set.tools]);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const result = await registry.invoke(callOf('echo', { message: 'anyone?' }), toolContext());
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(
      /^Tool "echo" failed: MCP server "mcp-servers\/everything" could not be reached for the call to "echo": /,
    );
  });

  it('an endpoint that does not answer is a connection error naming only the host', async () => {
    const port = await freePort();
    const error = await mcpTools({ url: `http://127.0.0.1:${port}/mcp?token=hunter2` }).catch(
      (caught: unknown) => caught,
    );
    expect(HarnessError.isInstance(error) && error.code).toBe('connection');
    expect((error as Error).message).toContain(`Could not connect to MCP server "127.0.0.1:${port}"`);
    expect((error as Error).message).not.toContain('hunter2');
  });
});
