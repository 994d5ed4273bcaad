import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { McpToolsOptionsSchema } from '../../src/mcp/options.js';

describe('docs/mcp.md', () => {
  it('its option table lists exactly the options mcpTools accepts', async () => {
    const page = await readFile(new URL('../../docs/mcp.md', import.meta.url), 'utf8');
    const table = page.split('<!-- option-table: mcpTools -->')[1]?.split('\n\n')[0] ?? '';
    const documented = [...table.matchAll(/^\| `(\w+)` \|/gm)].map((match) => match[1]);
    expect(documented.sort()).toEqual(Object.keys(McpToolsOptionsSchema.shape).sort());
  });
});
