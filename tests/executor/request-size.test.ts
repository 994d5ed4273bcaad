import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { GenerateRequest, GenerateResult, Message, ToolSpec, Usage } from '../../src/backend/types.js';
import type { EventInput, LlmRequestEvent } from '../../src/events.js';
import { Executor } from '../../src/executor/executor.js';
import { MemoryManager } from '../../src/memory/memory-manager.js';
import { TokenCounter } from '../../src/memory/token-counter.js';
import { gptTokenizer } from '../../src/memory/tokenizer.js';
import type { ExecutionMemory } from '../../src/memory/types.js';
import { submit, toolCall } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { LocalWorkspace } from '../../src/workspace/local-workspace.js';
import { deterministicText } from '../memory/helpers.js';

let workspace: LocalWorkspace | undefined;
afterEach(async () => {
  await workspace?.dispose();
  workspace = undefined;
});

/** Counts what each request sent afresh, with o200k. */
const o200k = new TokenCounter(gptTokenizer());
const PROVIDER_RATIO = 2;
const CALLS = 3;

/**
 * A loop of {@link CALLS} tool calls with 6 000-character outputs on `window`, against a provider that reports twice
 * the o200k count of every request as its input usage.
 */
async function loop(window: number, memory: ExecutionMemory) {
  workspace = await LocalWorkspace.create();
  let step = 0;
  const backend = new ScriptedBackend(
    (request: GenerateRequest): GenerateResult => {
      const result = step < CALLS ? toolCall('fetch', { page: step }, `page_${step}`) : submit('done');
      step++;
      const usage: Usage = {
        inputTokens: PROVIDER_RATIO * o200k.request(request.messages, request.tools ?? []),
        outputTokens: 1,
      };
      return { ...result, usage };
    },
    { contextWindow: window, usage: 'zero' },
  );
  const fetch = defineTool({
    name: 'fetch',
    description: 'Fetches a page.',
    input: z.object({ page: z.number() }),
    execute: ({ page }) => deterministicText(page + 1, 6_000),
  });
  const events: EventInput[] = [];
  const result = await new Executor({
    backend,
    tools: new ToolRegistry([fetch]),
    memory,
    emit: (event) => events.push(event),
  }).run({ runId: 'r1', purpose: 'execute', scope: 'subtask-1', request: 'Fetch.', objective: 'Fetch.', workspace });
  expect(result.status).toBe('completed');
  const requests = events.filter((e): e is LlmRequestEvent => e.type === 'llm-request');
  return { backend, requests };
}

const sentTokens = (call: { messages: Message[]; tools?: ToolSpec[] }) =>
  o200k.request(call.messages, call.tools ?? []);

describe("the executor's request sizes", () => {
  it('reports a bound far below the threshold and never calibrates from it', async () => {
    const memory = new MemoryManager();
    const { backend, requests } = await loop(128_000, memory);
    expect(requests).toHaveLength(CALLS + 1);
    backend.calls.forEach((call, i) => {
      expect(requests[i]!.requestTokens).toBeGreaterThanOrEqual(sentTokens(call));
      expect(requests[i]!.requestTokens).toBeLessThanOrEqual(0.9 * 128_000);
    });
    // The last requests were well over the 1 000 tokens calibration needs; learning from a bound (about four bytes
    // per token here) would have set a factor near 0.5 instead of 2.
    expect(sentTokens(backend.calls.at(-1)!)).toBeGreaterThan(3_000);
    const last = backend.calls.at(-1)!.messages;
    expect(memory.countRequest(last, [], backend)).toBe(memory.countRequest(last, []));
  });

  it('reports the exact count near the threshold and calibrates from it', async () => {
    const memory = new MemoryManager();
    // 16 000 tokens less a 4 000-token answer reserve: two 6 000-character outputs take the bound over 12 000.
    const { backend, requests } = await loop(16_000, memory);
    const exactCalls = backend.calls.filter((call, i) => {
      const sent = sentTokens(call);
      // Calibrated by the time of the call, or not yet: either way the figure is a count, not a bound.
      return requests[i]!.requestTokens === sent || requests[i]!.requestTokens === Math.ceil(sent * 2 * 1.05);
    });
    expect(exactCalls.length).toBeGreaterThanOrEqual(2);
    const last = backend.calls.at(-1)!.messages;
    expect(memory.countRequest(last, [], backend)).toBeGreaterThanOrEqual(2 * memory.countRequest(last, []));
  });

  it('counts exactly with a memory that has no sizeRequest, and calibrates from every call', async () => {
    const inner = new MemoryManager();
    const memory: ExecutionMemory = {
      boundObservation: (invocation, scope) => inner.boundObservation(invocation, scope),
      fitRequest: (request, scope) => inner.fitRequest(request, scope),
      pruneAfterOverflow: (request, scope) => inner.pruneAfterOverflow(request, scope),
      countRequest: (messages, tools, backend) => inner.countRequest(messages, tools, backend),
      observeUsage: (backend, counted, usage) => inner.observeUsage(backend, counted, usage),
    };
    const { backend, requests } = await loop(128_000, memory);
    expect(requests[0]!.requestTokens).toBe(sentTokens(backend.calls[0]!));
    const last = backend.calls.at(-1)!.messages;
    expect(inner.countRequest(last, [], backend)).toBeGreaterThanOrEqual(2 * inner.countRequest(last, []));
  });
});
