import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { anthropic } from '../../src/backend/anthropic.js';
import { openAICompatible } from '../../src/backend/openai-compatible.js';
import type { LlmBackend } from '../../src/backend/types.js';
import type { HarnessEvent } from '../../src/events.js';
import { createHarness } from '../../src/harness/harness.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { cassetteResponse, readCassette } from '../backend/support/fixture-formats.js';
import {
  SSE_HEADERS,
  startLoopbackServer,
  type LoopbackServer,
  type ScriptedResponse,
} from '../backend/support/loopback-server.js';
import { readFixture } from '../support/fixtures.js';
import { tempDir } from './helpers.js';

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The tools the recorded conversations call. */
const getCapital = defineTool({
  name: 'get_capital',
  description: 'Returns the capital of a country.',
  input: z.object({ country: z.string() }),
  execute: ({ country }) => (country === 'UK' ? 'London' : 'unknown'),
});
const getWeather = defineTool({
  name: 'get_weather',
  description: 'Returns the weather of a place.',
  input: z.object({ location: z.string() }),
  execute: ({ location }) => `Sunny in ${location}`,
});

/** The text a recorded SSE body streams, read straight from its frames. */
function streamedText(body: string, pick: (payload: Record<string, unknown>) => unknown): string {
  return body
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => pick(JSON.parse(line.slice(6)) as Record<string, unknown>))
    .filter((piece): piece is string => typeof piece === 'string')
    .join('');
}

interface Recording {
  name: string;
  tools: Array<typeof getCapital | typeof getWeather>;
  responses: ScriptedResponse[];
  backend(baseURL: string): LlmBackend;
  /** The final answer as the second recorded stream spells it. */
  answer: string;
  /** The event types of the run with runs of the same type collapsed. */
  order: string[];
}

function recordings(): Recording[] {
  const openai = readCassette('providers/openai/test_run_stream_sync_streams_real_model.yaml');
  const anthropicText = readFixture('providers/anthropic/basic_response.txt');
  type Json = Record<string, unknown>;
  return [
    {
      name: 'openAICompatible',
      tools: [getCapital],
      responses: openai.map(cassetteResponse),
      backend: (baseURL) =>
        openAICompatible({ baseURL: `${baseURL}/v1`, apiKey: 'sk-test', model: 'gpt-4o-mini', stream: true }),
      answer: streamedText(
        openai[1]!.response.body!.string,
        (p) => ((p.choices as Json[] | undefined)?.[0]?.delta as Json | undefined)?.content,
      ),
      order: [
        'llm-request',
        'tool-call-delta',
        'llm-response',
        'tool-call',
        'tool-result',
        'llm-request',
        'text-delta',
        'llm-response',
      ],
    },
    {
      name: 'anthropic',
      tools: [getWeather],
      responses: [
        { headers: SSE_HEADERS, body: readFixture('providers/anthropic/tool_use_response.txt') },
        { headers: SSE_HEADERS, body: anthropicText },
      ],
      backend: (baseURL) => anthropic({ baseURL, apiKey: 'sk-ant-test', model: 'claude-test', stream: true }),
      answer: streamedText(anthropicText, (p) => (p.delta as Json | undefined)?.text),
      order: [
        'llm-request',
        'text-delta',
        'tool-call-delta',
        'llm-response',
        'tool-call',
        'tool-result',
        'llm-request',
        'text-delta',
        'llm-response',
      ],
    },
  ];
}

describe('live streaming events of a run over the shipped adapters (recorded provider streams)', () => {
  it.each(recordings().map((r) => [r.name, r] as const))(
    '%s: llm-request → deltas → llm-response → tool-call, deltas adding up',
    async (_name, recording) => {
      server = await startLoopbackServer();
      server.reply(...recording.responses);
      const harness = createHarness({
        backend: recording.backend(server.baseURL),
        tools: recording.tools,
        decomposition: false,
        verification: false,
        workspace: await tempDir(),
      });
      const events: HarnessEvent[] = [];
      harness.onAny((event) => {
        if (event.type !== 'memory-truncate') events.push(event);
      });

      const result = await harness.run('What is the capital here, and what is it like?');

      expect(result.status).toBe('succeeded');
      const model = events.filter((e) =>
        ['llm-request', 'text-delta', 'tool-call-delta', 'llm-response', 'tool-call', 'tool-result'].includes(e.type),
      );
      expect(model.map((e) => e.type).filter((type, i, all) => type !== all[i - 1])).toEqual(recording.order);

      // Each call's events share one callId, distinct from the other call's.
      const requests = events.filter((e) => e.type === 'llm-request');
      expect(new Set(requests.map((e) => e.callId)).size).toBe(2);
      for (const request of requests) {
        const own = model.filter(
          (e) => 'callId' in e && e.callId === request.callId && e.type !== 'tool-call' && e.type !== 'tool-result',
        );
        expect(own[0]).toBe(request);
        expect(own.at(-1)?.type).toBe('llm-response');
      }

      // The tool-call deltas add up to the arguments the tool-call event carries, under its id.
      const toolCall = events.find((e) => e.type === 'tool-call');
      const toolDeltas = events.filter((e) => e.type === 'tool-call-delta');
      expect(toolDeltas.map((e) => e.argumentsDelta).join('')).toBe(toolCall?.arguments);
      expect(new Set(toolDeltas.map((e) => e.toolCallId))).toEqual(new Set([toolCall?.callId]));
      expect(toolDeltas[0]?.toolName).toBe(toolCall?.toolName);

      // The last call's text deltas add up to the final answer, which is the recorded text.
      const lastCall = requests.at(-1)!.callId;
      const text = events.flatMap((e) => (e.type === 'text-delta' && e.callId === lastCall ? [e.text] : [])).join('');
      expect(text).toBe(recording.answer);
      expect(result.deliverable.answer).toBe(recording.answer);
      expect(recording.answer.length).toBeGreaterThan(0);
    },
  );
});
