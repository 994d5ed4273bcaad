import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { ToolContext } from '../../src/tools/types.js';
import { stubWorkspace } from '../executor/stub-workspace.js';

function context(): ToolContext {
  const backend = new ScriptedBackend([]);
  return {
    runId: 'run-1',
    context: undefined,
    purpose: 'execute',
    scope: 'subtask-1',
    workspace: stubWorkspace('/tmp/ws-root'),
    signal: new AbortController().signal,
    backendFor: () => backend,
    generate: (role, request) => backend.generate({ ...request, purpose: role }),
    onScopeEnd: () => undefined,
  };
}

/** Things a tool (or a library it calls) can throw that break naive `error.message` / `String(error)` formatting. */
const hostile: Array<[string, () => unknown]> = [
  [
    'an object whose toString() throws',
    () => ({
      toString() {
        throw new Error('toString exploded');
      },
    }),
  ],
  [
    'an Error whose message getter throws',
    () => {
      const error = new Error('x');
      Object.defineProperty(error, 'message', {
        get() {
          throw new Error('getter exploded');
        },
      });
      return error;
    },
  ],
  ['an object without a prototype', () => Object.create(null) as object],
  ['a symbol', () => Symbol('boom')],
  [
    'a proxy whose every trap throws',
    () =>
      new Proxy(
        {},
        {
          get() {
            throw new Error('get trap');
          },
          getPrototypeOf() {
            throw new Error('prototype trap');
          },
        },
      ),
  ],
];

describe('ToolRegistry.invoke never throws, whatever a tool throws', () => {
  it.each(hostile)('a tool throwing %s becomes an error observation', async (_name, make) => {
    const thrower = defineTool({
      name: 'thrower',
      description: 'Throws.',
      input: z.object({}),
      execute: () => {
        throw make();
      },
    });
    const result = await new ToolRegistry([thrower]).invoke({ id: 'c1', name: 'thrower', arguments: '{}' }, context());
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^Tool "thrower" failed: /);
  });

  it.each(hostile)('a schema refinement throwing %s becomes an error observation', async (_name, make) => {
    const picky = defineTool({
      name: 'picky',
      description: 'Checks its input.',
      input: z.object({ a: z.string() }).refine(() => {
        throw make();
      }),
      execute: () => 'never',
    });
    const result = await new ToolRegistry([picky]).invoke(
      { id: 'c1', name: 'picky', arguments: '{"a":"x"}' },
      context(),
    );
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^Tool "picky" could not check its input: /);
  });

  it('a result whose text getter throws becomes an error observation', async () => {
    const sly = defineTool({
      name: 'sly',
      description: 'Returns a hostile result.',
      input: z.object({}),
      execute: () =>
        ({
          get text(): string {
            throw new Error('text getter');
          },
        }) as { text: string },
    });
    const result = await new ToolRegistry([sly]).invoke({ id: 'c1', name: 'sly', arguments: '{}' }, context());
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^Tool "sly" returned an invalid result/);
  });

  it('keeps the message of an ordinary error', async () => {
    const plain = defineTool({
      name: 'plain',
      description: 'Throws plainly.',
      input: z.object({}),
      execute: () => {
        throw new Error('disk full');
      },
    });
    const result = await new ToolRegistry([plain]).invoke({ id: 'c1', name: 'plain', arguments: '{}' }, context());
    expect(result.text).toBe('Tool "plain" failed: disk full');
  });
});
