import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AiSdkLanguageModel, aiSdkBackend } from '../../src/ai-sdk/index.js';
import type { HarnessEvent } from '../../src/events.js';
import { createHarness } from '../../src/harness/harness.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { readFixture } from '../support/fixtures.js';
import { cassetteResponse, readCassette } from '../backend/support/fixture-formats.js';
import { type LoopbackServer, type ScriptedResponse, startLoopbackServer } from '../backend/support/loopback-server.js';
import { anthropicWire, openAIWire, type WireFormat } from '../backend/support/wire-formats.js';
import { tempDir } from '../harness/helpers.js';

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface Provider {
  name: string;
  wire: WireFormat;
  model(baseURL: string): AiSdkLanguageModel;
  /** The recorded stream whose answer is a call of `tool`. */
  recorded(): ScriptedResponse;
  tool: { name: string; id: string; arguments: string; answer: string };
}

const providers: Provider[] = [
  {
    name: '@ai-sdk/openai',
    wire: openAIWire,
    model: (baseURL) => createOpenAI({ baseURL: `${baseURL}/v1`, apiKey: 'sk-test' }).chat('gpt-4o-mini'),
    recorded: () => cassetteResponse(readCassette('providers/openai/test_run_stream_sync_streams_real_model.yaml')[0]!),
    tool: { name: 'get_capital', id: 'call_ZR5UUuTt3pf61kjwAJIYdVMj', arguments: '{"country":"UK"}', answer: 'London' },
  },
  {
    name: '@ai-sdk/anthropic',
    wire: anthropicWire,
    model: (baseURL) => createAnthropic({ baseURL: `${baseURL}/v1`, apiKey: 'sk-ant-test' })('claude-sonnet-4-5'),
    recorded: () => ({
      headers: { 'content-type': 'text/event-stream' },
      body: readFixture('providers/anthropic/tool_use_response.txt'),
    }),
    tool: {
      name: 'get_weather',
      id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn',
      arguments: '{"location": "Paris"}',
      answer: 'Sunny, 21 °C',
    },
  },
];

describe.each(providers)('a whole run through aiSdkBackend and $name', (provider) => {
  it.each([true, false])(
    'stream: %s: the tool call (recorded when streaming) runs, its result goes back, the run succeeds',
    async (stream) => {
      server = await startLoopbackServer();
      const { wire, tool } = provider;
      const call = { id: tool.id, name: tool.name, args: [tool.arguments] };
      server.reply(
        stream
          ? provider.recorded()
          : wire.reply({ toolCalls: [call], finish: 'tool-calls', usage: { input: 40, output: 9 } }, false),
        wire.reply(
          {
            toolCalls: [
              { id: 'call_submit', name: 'submit_answer', args: [JSON.stringify({ answer: tool.answer, files: [] })] },
            ],
            finish: 'tool-calls',
            usage: { input: 80, output: 12 },
          },
          stream,
        ),
        wire.reply(
          { text: ['{"passed": true, ', '"defects": []}'], finish: 'stop', usage: { input: 120, output: 8 } },
          stream,
        ),
      );
      const inputs: unknown[] = [];
      const lookup = defineTool({
        name: tool.name,
        description: `Looks up ${tool.name.replace('get_', '')}.`,
        input: z.record(z.string(), z.string()),
        execute: async (input) => {
          inputs.push(input);
          return tool.answer;
        },
      });
      const harness = createHarness({
        backend: aiSdkBackend(provider.model(server.baseURL), { contextWindow: 128_000, stream }),
        tools: [lookup],
        decomposition: false,
        workspace: await tempDir(),
      });
      const deltas: Array<Extract<HarnessEvent, { type: 'tool-call-delta' }>> = [];
      harness.on('tool-call-delta', (event) => deltas.push(event));

      const result = await harness.run('Answer with one lookup.');

      expect(result.status).toBe('succeeded');
      expect(result.deliverable).toMatchObject({ answer: tool.answer });
      expect(inputs).toEqual([JSON.parse(tool.arguments)]);
      expect(server.requests).toHaveLength(3);
      const [first, second] = server.requests.map((request) => request.body);
      expect(JSON.stringify(first)).toContain('Answer with one lookup.');
      expect(JSON.stringify(first?.tools)).toContain(tool.name);
      expect(wire.toolResultText(second!, tool.id)).toContain(tool.answer);
      // Streaming shows the call as it arrives; generate does not stream.
      expect(deltas.some((event) => event.toolName === tool.name)).toBe(stream);
      expect(result.report.byPurpose).toMatchObject({ verify: { calls: 1, inputTokens: 120, outputTokens: 8 } });
    },
  );
});
