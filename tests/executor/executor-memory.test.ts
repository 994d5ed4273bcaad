import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { EventInput } from '../../src/events.js';
import { Executor } from '../../src/executor/executor.js';
import { MemoryManager } from '../../src/memory/memory-manager.js';
import { submit, toolCall } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { LocalWorkspace } from '../../src/workspace/local-workspace.js';

let workspace: LocalWorkspace | undefined;
afterEach(async () => {
  await workspace?.dispose();
  workspace = undefined;
});

describe('Executor with the shipped MemoryManager and LocalWorkspace', () => {
  it.each([
    ['an explicit MemoryManager', () => new MemoryManager()],
    ['no memory option (the paper defaults apply)', () => undefined],
  ])('bounds a large tool output before it enters the dialogue with %s', async (_label, makeMemory) => {
    workspace = await LocalWorkspace.create();
    const dump = defineTool({
      name: 'dump',
      description: 'Returns a very long text.',
      input: z.object({}),
      execute: () => `START ${'lorem ipsum '.repeat(5_000)} END`,
    });
    const backend = new ScriptedBackend({ execute: [toolCall('dump'), submit('summarised')] });
    const events: EventInput[] = [];
    const memory = makeMemory();
    const executor = new Executor({
      backend,
      tools: new ToolRegistry([dump]),
      ...(memory ? { memory } : {}),
      emit: (event) => events.push(event),
    });
    const result = await executor.run({
      runId: 'r1',
      purpose: 'execute',
      scope: 'subtask-1',
      request: 'Read the dump.',
      objective: 'Read the dump.',
      workspace,
    });
    expect(result).toMatchObject({ status: 'completed', answer: 'summarised', iterations: 2 });
    const tool = backend.calls[1]!.messages.find((m) => m.role === 'tool');
    const content = String(tool?.content);
    expect(content.length).toBeLessThan(10_000);
    expect(content).toContain('START');
    expect(content).toContain('END');
    expect(events.some((e) => e.type === 'memory-truncate')).toBe(true);
    const result1 = events.find((e) => e.type === 'tool-result');
    expect(result1).toMatchObject({ outputChars: 60_010 });
  });
});
