import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { anthropic } from '../../src/backend/anthropic.js';
import { openAICompatible } from '../../src/backend/openai-compatible.js';
import type { LlmBackend } from '../../src/backend/types.js';
import { createHarness } from '../../src/harness/harness.js';
import { writeToFileTool } from '../../src/tools/builtin/write-to-file.js';
import { startLoopbackServer, type LoopbackServer } from '../backend/support/loopback-server.js';
import { anthropicWire, openAIWire, type WireFormat } from '../backend/support/wire-formats.js';
import { tempDir } from './helpers.js';

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface Provider {
  name: string;
  wire: WireFormat;
  backend(baseURL: string, stream: boolean): LlmBackend;
  /** The assistant turn's tool-call ids, as sent back to the provider. */
  echoedCallIds(body: Record<string, unknown>): string[];
}

type Json = Record<string, unknown>;
const messagesOf = (body: Json) => (body.messages ?? []) as Json[];

const providers: Provider[] = [
  {
    name: 'openAICompatible',
    wire: openAIWire,
    backend: (baseURL, stream) =>
      openAICompatible({ baseURL: `${baseURL}/v1`, apiKey: 'sk-test', model: 'gpt-test', stream }),
    echoedCallIds: (body) =>
      messagesOf(body).flatMap((m) =>
        m.role === 'assistant' ? ((m.tool_calls ?? []) as Json[]).map((c) => String(c.id)) : [],
      ),
  },
  {
    name: 'anthropic',
    wire: anthropicWire,
    backend: (baseURL, stream) => anthropic({ baseURL, apiKey: 'sk-ant-test', model: 'claude-test', stream }),
    echoedCallIds: (body) =>
      messagesOf(body).flatMap((m) =>
        m.role === 'assistant' && Array.isArray(m.content)
          ? (m.content as Json[]).filter((b) => b.type === 'tool_use').map((b) => String(b.id))
          : [],
      ),
  },
];

describe('a whole run over HTTP through the shipped adapters', () => {
  const cases = providers.flatMap((p) => [true, false].map((stream) => [p.name, stream, p] as const));

  it.each(cases)(
    '%s (stream: %s) carries tool calls, results and the verdict across the wire',
    async (_name, stream, provider) => {
      server = await startLoopbackServer();
      const { wire } = provider;
      server.reply(
        wire.reply(
          {
            toolCalls: [
              {
                id: 'call_write',
                name: 'write_to_file',
                args: ['{"path":"hello.md",', '"content":"# Hello from the wire"}'],
              },
            ],
            finish: 'tool-calls',
            usage: { input: 50, output: 10 },
          },
          stream,
        ),
        wire.reply(
          {
            toolCalls: [
              { id: 'call_submit', name: 'submit_answer', args: ['{"answer":"Wrote hello.md","files":["hello.md"]}'] },
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
      const harness = createHarness({
        backend: provider.backend(server.baseURL, stream),
        tools: [writeToFileTool()],
        decomposition: false,
        workspace: await tempDir(),
      });

      const result = await harness.run('Write hello.md greeting the reader.');

      expect(result.status).toBe('succeeded');
      expect(result.deliverable).toEqual({ answer: 'Wrote hello.md', files: ['hello.md'] });
      expect(await readFile(path.join(result.workspace, 'hello.md'), 'utf8')).toBe('# Hello from the wire');
      expect(server.requests).toHaveLength(3);
      const [first, second, verify] = server.requests.map((r) => r.body);
      // The original request reaches the model, and the tools are offered in the provider's shape.
      expect(JSON.stringify(first)).toContain('Write hello.md greeting the reader.');
      expect(JSON.stringify(first!.tools)).toContain('write_to_file');
      // The second call sends the model's own tool call back, answered by a tool result with the same id.
      expect(provider.echoedCallIds(second!)).toEqual(['call_write']);
      expect(wire.toolResultText(second!, 'call_write')).toContain('hello.md');
      // The verifier is shown the file by content.
      expect(JSON.stringify(verify)).toContain('# Hello from the wire');
      expect(result.report.byPurpose).toMatchObject({
        execute: { calls: 2, inputTokens: 130, outputTokens: 22 },
        verify: { calls: 1, inputTokens: 120, outputTokens: 8 },
      });
    },
  );
});
