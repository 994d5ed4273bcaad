import { describe, expect, it } from 'vitest';
import { ToolRegistry } from '../../src/tools/registry.js';
import { callOf, open, TEST_SERVER, toolContext } from './helpers.js';

describe('MCP tool names and descriptions', () => {
  it('makes every name acceptable to the backends, unique, and still calls the server tool by its own name', async () => {
    const set = await open({ command: process.execPath, args: [TEST_SERVER] }, { prefix: 'srv-' });
    const names = set.tools.map((tool) => tool.name);
    // `dotted_name` is acceptable and keeps its name; `dotted.name` becomes `dotted_name` too, so it gets a suffix.
    expect(names).toEqual(expect.arrayContaining(['srv-dotted_name', 'srv-dotted_name_2']));
    const long = names.find((name) => name.startsWith('srv-long_'));
    expect(long).toHaveLength(64);
    for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);

    const registry = new ToolRegistry([...set.tools]);
    expect((await registry.invoke(callOf('srv-dotted_name'), toolContext())).text).toBe('ran dotted_name');
    expect((await registry.invoke(callOf('srv-dotted_name_2'), toolContext())).text).toBe('ran dotted.name');
    expect((await registry.invoke(callOf(long as string), toolContext())).text).toBe(`ran long_${'x'.repeat(70)}`);
  });

  it('describes a tool without a description by its server, and is not read-only without readOnlyHint', async () => {
    const set = await open({ command: process.execPath, args: [TEST_SERVER] });
    expect(set.tools.find((tool) => tool.name === 'add_tool')?.readOnly).toBe(false); // no annotations
    expect(set.tools.find((tool) => tool.name === 'wait')?.readOnly).toBe(true); // readOnlyHint: true
    expect(set.tools.find((tool) => tool.name === 'dotted_name')?.description).toBe(
      'The tool "dotted_name" of the MCP server "test-server".',
    );
  });
});
