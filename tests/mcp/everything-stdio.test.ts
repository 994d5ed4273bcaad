import { describe, expect, it } from 'vitest';
import { HarnessError } from '../../src/errors.js';
import { McpToolRegistry, mcpTools } from '../../src/mcp/index.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { callOf, EVERYTHING_BIN, open, toolContext } from './helpers.js';

const everything = { command: EVERYTHING_BIN };

describe('mcpTools over stdio (server-everything)', () => {
  it('lists the server tools with its JSON Schema as is and readOnly from readOnlyHint', async () => {
    const set = await open(everything, { prefix: 'ev_' });
    expect(set.server).toBe('mcp-servers/everything');
    const names = set.tools.map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining(['ev_echo', 'ev_get-sum', 'ev_get-tiny-image', 'ev_toggle-simulated-logging']),
    );
    for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);

    const registry = new ToolRegistry([...set.tools]);
    const sum = registry.specs().find((spec) => spec.name === 'ev_get-sum');
    expect(sum?.description).toMatch(/sum/i);
    expect(sum?.inputSchema).toEqual({
      type: 'object',
      properties: {
        a: { type: 'number', description: 'First number' },
        b: { type: 'number', description: 'Second number' },
      },
      required: ['a', 'b'],
    });
    expect(registry.get('ev_echo')?.readOnly).toBe(true); // readOnlyHint: true
    expect(registry.get('ev_toggle-simulated-logging')?.readOnly).toBe(false); // readOnlyHint: false
  });

  it('calls a tool and returns its text', async () => {
    const set = await open(everything);
    const registry = new ToolRegistry([...set.tools]);
    const result = await registry.invoke(callOf('get-sum', { a: 2, b: 40 }), toolContext());
    expect(result.isError).toBe(false);
    expect(result.text).toContain('42');
  });

  it('passes image parts on as images the backends accept', async () => {
    const set = await open(everything);
    const result = await new ToolRegistry([...set.tools]).invoke(callOf('get-tiny-image'), toolContext());
    expect(result.isError).toBe(false);
    expect(result.images).toHaveLength(1);
    expect(result.images[0]?.mediaType).toBe('image/png');
    expect(
      Buffer.from(result.images[0]?.data ?? '', 'base64')
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    expect(result.text).toMatch(/\[image 1: image\/png, \d+ bytes, attached\]/);
  });

  it('shows embedded resources with their URI and resource links with URI and name', async () => {
    const set = await open(everything);
    const registry = new ToolRegistry([...set.tools]);
    const text = await registry.invoke(
      callOf('get-resource-reference', { resourceType: 'Text', resourceId: 3 }),
      toolContext(),
    );
    expect(text.text).toMatch(/\[resource demo:\/\/resource\/dynamic\/text\/3, text\/plain\]\n.+/);
    const blob = await registry.invoke(
      callOf('get-resource-reference', { resourceType: 'Blob', resourceId: 4 }),
      toolContext(),
    );
    expect(blob.text).toMatch(/\[binary resource demo:\/\/resource\/dynamic\/blob\/4, [^,]+, \d+ bytes, not shown\]/);
    const links = await registry.invoke(callOf('get-resource-links', { count: 2 }), toolContext());
    expect(links.text).toContain('[resource link "Blob Resource 1" demo://resource/dynamic/blob/1');
    expect(links.text).toContain('[resource link "Text Resource 2" demo://resource/dynamic/text/2');
  });

  it('turns an isError result into an error observation with the server message', async () => {
    const set = await open(everything);
    const result = await new ToolRegistry([...set.tools]).invoke(callOf('get-sum', { a: 'one' }), toolContext());
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^Tool "get-sum" failed: .*expected number/s);
  });

  it('starts the server with only the default environment plus env, not the host secrets', async () => {
    process.env.MCP_TEST_HOST_SECRET = 'host-secret-value';
    try {
      const set = await open({ ...everything, env: { GIVEN_TO_SERVER: 'yes' } });
      const result = await new ToolRegistry([...set.tools]).invoke(callOf('get-env'), toolContext());
      expect(result.text).toContain('GIVEN_TO_SERVER');
      expect(result.text).toContain('PATH');
      expect(result.text).not.toContain('host-secret-value');
    } finally {
      delete process.env.MCP_TEST_HOST_SECRET;
    }
  });

  it('refuses a clash with another tool when a registry is built, naming the prefix option', async () => {
    const a = await open(everything);
    const b = await open(everything);
    expect(() => new ToolRegistry([...a.tools, ...b.tools])).toThrow(/already registered/);
    expect(() => new McpToolRegistry([], [a, b])).toThrow(/prefix/);
    const prefixed = await open(everything, { prefix: 'b_' });
    expect(new McpToolRegistry([...a.tools], [prefixed]).has('b_echo')).toBe(true);
  });

  it('rejects bad options with invalid-options and a did-you-mean, before starting anything', async () => {
    const typo = await mcpTools(everything, { prefx: 'x_' } as never).catch((error: unknown) => error);
    expect(HarnessError.isInstance(typo) && typo.code).toBe('invalid-options');
    expect((typo as Error).message).toContain('`options.prefx` is not an option (did you mean `options.prefix`?)');

    const badPrefix = await mcpTools(everything, { prefix: 'has space' }).catch((error: unknown) => error);
    expect((badPrefix as Error).message).toContain('`options.prefix`');

    const both = await mcpTools({ command: 'x', url: 'http://127.0.0.1:1/mcp' } as never).catch(
      (error: unknown) => error,
    );
    expect((both as Error).message).toContain(
      '`server.command` is not an option; the options of `server` are `url`, `headers`',
    );

    const secret = 'ftp://user:hunter2@example.com/mcp';
    const badUrl = await mcpTools({ url: secret }).catch((error: unknown) => error);
    expect((badUrl as Error).message).toContain('`server.url`: must be an http:// or https:// URL');
    expect((badUrl as Error).message).not.toContain('hunter2');
  });

  it('fails with a connection error naming the program when it cannot be started', async () => {
    const error = await mcpTools({ command: '/nonexistent/mcp-server' }).catch((caught: unknown) => caught);
    expect(HarnessError.isInstance(error) && error.code).toBe('connection');
    expect((error as Error).message).toMatch(/Could not connect to MCP server "mcp-server": .*ENOENT/);
  });
});
