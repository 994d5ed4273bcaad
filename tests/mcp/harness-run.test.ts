import { describe, expect, it } from 'vitest';
import type { GenerateRequest, Message } from '../../src/backend/types.js';
import type { HarnessEvent } from '../../src/events.js';
import { createHarness } from '../../src/harness/harness.js';
import { McpToolRegistry } from '../../src/mcp/index.js';
import { planOf, submit, toolCall } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { EVERYTHING_BIN, open, TEST_SERVER } from './helpers.js';

const toolMessages = (request: GenerateRequest) =>
  request.messages.filter((message): message is Extract<Message, { role: 'tool' }> => message.role === 'tool');

const textOf = (message: Message | undefined) =>
  !message
    ? ''
    : typeof message.content === 'string'
      ? message.content
      : message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');

describe('a harness run with MCP tools on a scripted backend', () => {
  it('calls an MCP tool, sees its image and its bounded large output, and finishes', async () => {
    const set = await open({ command: EVERYTHING_BIN }, { prefix: 'ev_' });
    const huge = `${'alpha '.repeat(5_000)}${'omega '.repeat(5_000)}`; // 60 000 characters
    const backend = new ScriptedBackend({
      execute: [
        (request) => {
          expect(request.tools?.map((tool) => tool.name)).toEqual(
            expect.arrayContaining(['ev_echo', 'ev_get-tiny-image']),
          );
          return toolCall('ev_echo', { message: huge });
        },
        () => toolCall('ev_get-tiny-image'),
        (request) => submit(`echo answered; ${toolMessages(request).length} tool results`),
      ],
    });
    const events: HarnessEvent[] = [];
    const harness = createHarness({ backend, tools: [...set.tools], decomposition: false, verification: false });
    harness.onAny((event) => events.push(event));

    const result = await harness.run('Echo a long text, then look at the tiny image.');
    expect(result.status).toBe('succeeded');
    expect(result.deliverable.answer).toContain('echo answered; 2 tool results');
    backend.assertComplete();

    // The 60 000-character output reached the model bounded (head and tail, with a marker) and marked untrusted.
    const last = backend.calls.at(-1) as GenerateRequest;
    const [echoed, image] = toolMessages(last);
    const echoedText = textOf(echoed);
    expect(echoedText.length).toBeLessThan(10_000);
    expect(echoedText).toContain('Echo: alpha alpha');
    expect(echoedText).toContain('omega omega');
    expect(echoedText).toMatch(/^Output of ev_echo:\n⟦(data-[0-9a-f]+)⟧\n[\s\S]*\n⟦\/\1⟧$/);
    const truncation = events.find((event) => event.type === 'memory-truncate');
    expect(truncation).toMatchObject({ toolName: 'ev_echo', strategy: 'head-tail' });

    // The image result went to the model as an image part after the text.
    expect(Array.isArray(image?.content)).toBe(true);
    const parts = image?.content as Exclude<Message['content'], string>;
    expect(parts.find((part) => part.type === 'image')).toMatchObject({ type: 'image', mediaType: 'image/png' });

    const toolCalls = events.filter((event) => event.type === 'tool-result').map((event) => event.toolName);
    expect(toolCalls).toEqual(['ev_echo', 'ev_get-tiny-image', 'submit_answer']);
  });

  it('an error result is an error observation and the run goes on', async () => {
    const set = await open({ command: EVERYTHING_BIN });
    const backend = new ScriptedBackend({
      execute: [
        () => toolCall('get-sum', { a: 1 }),
        (request) => {
          const [failed] = toolMessages(request);
          expect(failed?.isError).toBe(true);
          expect(textOf(failed)).toContain('expected number');
          return toolCall('get-sum', { a: 1, b: 2 });
        },
        (request) => submit(`sum: ${textOf(toolMessages(request)[1]).includes('3') ? 'three' : 'unknown'}`),
      ],
    });
    const harness = createHarness({ backend, tools: [...set.tools], decomposition: false, verification: false });
    const result = await harness.run('Add one and two.');
    expect(result.status).toBe('succeeded');
    expect(result.deliverable.answer).toBe('sum: three');
  });

  it('a tool the server adds (listChanged) is offered from the next executor loop on, through McpToolRegistry', async () => {
    const set = await open({ command: process.execPath, args: [TEST_SERVER] }, { prefix: 't_' });
    const changes: string[][] = [];
    set.onToolsChanged((tools) => changes.push(tools.map((tool) => tool.name)));
    expect(set.tools.map((tool) => tool.name)).not.toContain('t_greet');

    const backend = new ScriptedBackend({
      plan: [planOf('Add a greeting tool', 'Use the greeting tool')],
      execute: [
        () => toolCall('t_add_tool', { name: 'greet' }),
        () => submit('added'),
        (request) => {
          // A fresh loop: its tool list is read when it starts, and now holds the new tool.
          expect(request.tools?.map((tool) => tool.name)).toContain('t_greet');
          return toolCall('t_greet');
        },
        (request) => submit(textOf(toolMessages(request)[0])),
      ],
      synthesize: [submit('done')],
    });
    const harness = createHarness({
      backend,
      tools: new McpToolRegistry([], [set]),
      verification: false,
    });
    const result = await harness.run('Add a greeting tool and use it.');
    expect(result.status).toBe('succeeded');
    expect(result.subtasks[1]?.answer).toContain('hello from greet');
    expect(changes.at(-1)).toContain('t_greet');
    expect(set.tools.map((tool) => tool.name)).toContain('t_greet');
    backend.assertComplete();
  });
});
