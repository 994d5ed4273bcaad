import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { GenerateRequest, GenerateResult } from '../../src/backend/types.js';
import { HarnessError } from '../../src/errors.js';
import type { EventInput } from '../../src/events.js';
import { Executor } from '../../src/executor/executor.js';
import { reservedOutputTokens } from '../../src/llm/call-model.js';
import { gptTokenizer, MemoryManager, TokenCounter, type MemoryManagerOptions } from '../../src/memory/index.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { reply, submit, toolCall } from '../../src/testing/replies.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { LocalWorkspace } from '../../src/workspace/local-workspace.js';
import { deterministicText } from './helpers.js';

const REQUEST = 'Collect the 200 measurement pages and report the largest value. Keep the original units.';
/** The task ledger: checkpoints of earlier subtasks, passed to this one. */
const LEDGER = 'Subtask 1 (list the pages): answer "pages 0-199 exist"; files: pages.txt';
const WINDOW = 32_000;
const STEPS = 200;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function longLoop(options: {
  window: number;
  memory?: MemoryManagerOptions;
  summarize?: (index: number) => string;
  overflowAt?: number;
  /** The provider reports this many times the o200k count of every request as its input usage. */
  providerRatio?: number;
}) {
  // The real workspace, on disk: full outputs are appended through it.
  const workspace = await LocalWorkspace.create();
  cleanups.push(() => workspace.dispose());
  let executeCalls = 0;
  let summarizeCalls = 0;
  const answer = (request: GenerateRequest): GenerateResult => {
    if (request.purpose === 'summarize')
      return reply(options.summarize?.(summarizeCalls++) ?? 'Fetched pages so far; largest value 42 kPa.');
    const step = executeCalls++;
    if (step === options.overflowAt)
      throw new HarnessError('context-length-exceeded', 'maximum context length exceeded');
    return step - (options.overflowAt !== undefined && step > options.overflowAt ? 1 : 0) < STEPS
      ? toolCall('fetch_page', { page: step }, `page_${step}`)
      : submit('largest value: 42 kPa');
  };
  const { providerRatio } = options;
  const backend = new ScriptedBackend(
    (request: GenerateRequest) => {
      const result = answer(request);
      if (providerRatio === undefined) return result;
      return {
        ...result,
        usage: {
          inputTokens: Math.ceil(providerRatio * o200k.request(request.messages, request.tools ?? [])),
          outputTokens: 1,
        },
      };
    },
    { contextWindow: options.window, usage: 'zero' },
  );
  const fetchPage = defineTool({
    name: 'fetch_page',
    description: 'Fetches one measurement page.',
    input: z.object({ page: z.number() }),
    execute: ({ page }) => deterministicText(page + 1, 20_000),
  });
  const memory = new MemoryManager(options.memory);
  const events: EventInput[] = [];
  const executor = new Executor({
    backend,
    tools: new ToolRegistry([fetchPage]),
    memory,
    emit: (event) => events.push(event),
    limits: { maxIterations: STEPS + 10 },
  });
  const result = await executor.run({
    runId: 'run-1',
    purpose: 'execute',
    scope: 'subtask-1',
    request: REQUEST,
    objective: 'Fetch every page with fetch_page, then submit the largest value.',
    priorState: LEDGER,
    workspace,
  });
  return { result, backend, memory, events, workspace };
}

/** Counts requests afresh, not with the manager's cache. */
const o200k = new TokenCounter(gptTokenizer());

/**
 * Every backend request fits the window with its output reserve, as the provider counts it (`providerRatio` × o200k);
 * the request and ledger are in each executor request.
 */
function expectEveryRequestBounded(backend: ScriptedBackend, providerRatio = 1) {
  const provider = (call: GenerateRequest) => providerRatio * o200k.request(call.messages, call.tools ?? []);
  for (const call of backend.callsFor('execute')) {
    expect(provider(call)).toBeLessThanOrEqual(0.95 * WINDOW);
    expect(provider(call) + (call.maxOutputTokens ?? reservedOutputTokens(WINDOW))).toBeLessThanOrEqual(WINDOW);
    const task = call.messages[1]!.content;
    expect(typeof task === 'string' && task.includes(REQUEST) && task.includes(LEDGER)).toBe(true);
  }
  for (const call of backend.callsFor('summarize')) {
    expect(provider(call) + (call.maxOutputTokens ?? 0)).toBeLessThanOrEqual(WINDOW);
  }
}

describe('a 200-step subtask with 20 000-char tool outputs on a 32 000-token window', () => {
  it('completes with every request inside the window and the original request in each', async () => {
    const { result, backend, events } = await longLoop({ window: 32_000 });
    expect(result.status).toBe('completed');
    expect(result.answer).toBe('largest value: 42 kPa');
    expect(backend.callsFor('execute')).toHaveLength(STEPS + 1);
    expectEveryRequestBounded(backend);
    expect(result.peakRequestTokens).toBeLessThanOrEqual(0.95 * 32_000);
    expect(events.filter((e) => e.type === 'memory-truncate')).toHaveLength(STEPS);
    const compressions = events.filter((e) => e.type === 'memory-compress');
    expect(compressions.length).toBeGreaterThan(5);
    for (const event of compressions) expect(event.tokensAfter).toBeLessThan(event.tokensBefore);
    expect(backend.callsFor('summarize').length).toBe(compressions.length);
  });

  it('prunes when summaries fail and after a context-length error, and still completes', async () => {
    const { result, backend, memory, events } = await longLoop({
      window: 32_000,
      summarize: (i) => (i % 2 === 1 ? '' : 'Summary: pages fetched, largest 42 kPa.'),
      overflowAt: 120,
    });
    const execute = backend.callsFor('execute');
    const size = (i: number) => memory.countRequest(execute[i]!.messages, execute[i]!.tools ?? []);
    // The call the backend rejected is retried once, smaller.
    expect(size(121)).toBeLessThan(size(120));
    expect(result.status).toBe('completed');
    const prunes = events.filter((e) => e.type === 'memory-prune');
    expect(prunes.map((e) => e.reason)).toContain('summary-failed');
    expect(prunes.map((e) => e.reason)).toContain('context-length-error');
    expect(events.some((e) => e.type === 'memory-compress')).toBe(true);
    expectEveryRequestBounded(backend);
  });

  it('with observation aging stays far below the window without summarising', async () => {
    const { result, backend, memory, events } = await longLoop({ window: 32_000, memory: { observationAging: {} } });
    expect(result.status).toBe('completed');
    expectEveryRequestBounded(backend);
    const peak = Math.max(...backend.callsFor('execute').map((c) => memory.countRequest(c.messages, c.tools ?? [])));
    expect(peak).toBeLessThan(0.9 * 32_000);
    expect(events.some((e) => e.type === 'memory-compress')).toBe(false);
    const last = backend.callsFor('execute').at(-1)!;
    const aged = last.messages.filter(
      (m) => m.role === 'tool' && typeof m.content === 'string' && m.content.startsWith('[aged]'),
    );
    expect(aged.length).toBeGreaterThan(150);
    expect(aged[0]!.content).toMatch(/\.harness\/outputs\/subtask-1\.txt lines \d+-\d+/);
  });

  it("keeps a model whose tokenizer counts 30 % more inside its window, calibrated from its provider's usage", async () => {
    const { result, backend, memory, events } = await longLoop({ window: 32_000, providerRatio: 1.3 });
    expect(result.status).toBe('completed');
    expectEveryRequestBounded(backend, 1.3);
    expect(events.some((e) => e.type === 'memory-compress')).toBe(true);
    const messages = backend.callsFor('execute').at(-1)!.messages;
    expect(memory.countRequest(messages, [], backend)).toBeGreaterThanOrEqual(1.3 * memory.countRequest(messages, []));
  });

  it('saves every full output through the workspace, at the lines its observation names', async () => {
    const { backend, workspace } = await longLoop({ window: 32_000 });
    const log = (await workspace.readFile('.harness/outputs/subtask-1.txt')).toString('utf8').split('\n');
    const execute = backend.callsFor('execute');
    for (const page of [0, 1, 57, STEPS - 1]) {
      const observation = execute[page + 1]!.messages.find((m) => m.role === 'tool' && m.toolCallId === `page_${page}`);
      const named = /subtask-1\.txt lines (\d+)-(\d+)/.exec(String(observation?.content));
      expect(named, `page ${page}`).not.toBeNull();
      expect(log.slice(Number(named![1]) - 1, Number(named![2])).join('\n')).toBe(deterministicText(page + 1, 20_000));
    }
  });
});
