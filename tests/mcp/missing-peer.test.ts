import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HIDE_SDK = fileURLToPath(new URL('./servers/hide-sdk.mjs', import.meta.url));

/** Runs `code` in a fresh Node process where @modelcontextprotocol/sdk cannot be resolved, as when it is not installed. */
async function withoutSdk(code: string): Promise<unknown> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', '--import', HIDE_SDK, '--input-type=module', '-e', code],
    { cwd: ROOT },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? 'null');
}

describe('horizon-harness/mcp without its optional peer', () => {
  it('imports without the SDK, and mcpTools() names the package to install', async () => {
    const outcome = await withoutSdk(`
      const hidden = await import('@modelcontextprotocol/sdk/client/index.js').then(() => false, () => true);
      const mcp = await import('./src/mcp/index.ts');
      const error = await mcp.mcpTools({ command: 'mcp-server-anything' }).then(() => undefined, (e) => e);
      console.log(JSON.stringify({ hidden, exports: Object.keys(mcp).sort(), code: error?.code, message: error?.message }));
    `);
    expect(outcome).toEqual({
      hidden: true,
      exports: ['McpToolRegistry', 'mcpTools'],
      code: 'missing-peer-dependency',
      message:
        'horizon-harness/mcp needs the optional peer dependency "@modelcontextprotocol/sdk", which is not installed. ' +
        'Install it next to horizon-harness: npm install @modelcontextprotocol/sdk',
    });
  });
});
