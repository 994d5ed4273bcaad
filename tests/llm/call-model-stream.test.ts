import { describe, expect, it } from 'vitest';
import type { GenerateRequest, GenerateResult, LlmBackend, StreamPart } from '../../src/backend/types.js';
import { HarnessError } from '../../src/errors.js';
import { HarnessEvents, runEventSender } from '../../src/event-bus.js';
import type { EventInput, HarnessEvent } from '../../src/events.js';
import { callModel, type ModelCallContext } from '../../src/llm/call-model.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';

const ASK = { messages: [{ role: 'user' as const, content: 'Say hello, then read notes.md.' }] };

function recorder(backend: LlmBackend, extra: Partial<ModelCallContext> = {}) {
  const events: EventInput[] = [];
  let next = 0;
  const context: ModelCallContext = {
    backend,
    purpose: 'execute',
    runId: 'run-1',
    scope: 'subtask-1',
    emit: (event) => events.push(event),
    newCallId: () => `call-${++next}`,
    ...extra,
  };
  return { events, context };
}

function result(
  content: string,
  toolCalls: GenerateResult['message']['toolCalls'] = [],
  reasoning?: string,
): GenerateResult {
  return {
    message: { role: 'assistant', content, toolCalls, ...(reasoning === undefined ? {} : { reasoning }) },
    finishReason: toolCalls.length > 0 ? 'tool-calls' : 'stop',
    usage: { inputTokens: 12, outputTokens: 7 },
  };
}

describe('callModel over a backend with stream()', () => {
  it('emits llm-request, the deltas as parts arrive and llm-response under one callId; finish is the result', async () => {
    const answer = result(
      'Hello there',
      [{ id: 'tc-1', name: 'read_file', arguments: '{"path":"notes.md"}' }],
      'thinking it over',
    );
    const backend = new ScriptedBackend([answer], { stream: true });
    const { events, context } = recorder(backend);

    const got = await callModel(context, ASK);

    expect(got.message.content).toBe('Hello there');
    expect(got.message.toolCalls).toEqual(answer.message.toolCalls);
    expect(events.map((e) => e.type)).toEqual([
      'llm-request',
      'reasoning-delta',
      'text-delta',
      'text-delta',
      'tool-call-delta',
      'tool-call-delta',
      'llm-response',
    ]);
    for (const event of events)
      expect(event).toMatchObject({ runId: 'run-1', purpose: 'execute', scope: 'subtask-1', callId: 'call-1' });
    const text = events.flatMap((e) => (e.type === 'text-delta' ? [e.text] : [])).join('');
    expect(text).toBe('Hello there');
    const args = events.flatMap((e) => (e.type === 'tool-call-delta' ? [e.argumentsDelta] : [])).join('');
    expect(args).toBe('{"path":"notes.md"}');
    expect(events.find((e) => e.type === 'tool-call-delta')).toMatchObject({
      toolCallId: 'tc-1',
      toolName: 'read_file',
    });
    expect(events.find((e) => e.type === 'reasoning-delta')).toMatchObject({ text: 'thinking it over' });
    expect(events.at(-1)).toMatchObject({
      type: 'llm-response',
      finishReason: 'tool-calls',
      toolCalls: 1,
      usage: { inputTokens: 12, outputTokens: 7 },
    });
  });

  it('sends purpose, sampling and maxOutputTokens through stream() and reports usage as generate() does', async () => {
    const backend = new ScriptedBackend([result('ok')], { stream: true });
    const usage: number[] = [];
    const { context } = recorder(backend, {
      sampling: { temperature: 0.3, topP: 0.8 },
      maxOutputTokens: 999,
      countTokens: () => 41,
      onUsage: (counted, reported) => usage.push(counted, reported.inputTokens),
    });
    await callModel(context, ASK);
    expect(backend.calls[0]).toMatchObject({ purpose: 'execute', temperature: 0.3, topP: 0.8, maxOutputTokens: 999 });
    expect(usage).toEqual([41, 12]);
  });

  it('gives every model call its own callId', async () => {
    const backend = new ScriptedBackend([result('a'), result('b')], { stream: true });
    const { events, context } = recorder(backend);
    await callModel(context, ASK);
    await callModel(context, ASK);
    const ids = events.filter((e) => e.type === 'llm-request').map((e) => ('callId' in e ? e.callId : ''));
    expect(ids).toEqual(['call-1', 'call-2']);
    expect(events.filter((e) => e.type === 'text-delta').map((e) => ('callId' in e ? e.callId : ''))).toEqual([
      'call-1',
      'call-2',
    ]);
  });

  it('uses generate() when the backend has no stream() or opts out with streaming: false', async () => {
    for (const backend of [new ScriptedBackend([result('plain')]), plainBackend(result('plain'))]) {
      const { events, context } = recorder(backend);
      const got = await callModel(context, ASK);
      expect(got.message.content).toBe('plain');
      expect(events.map((e) => e.type)).toEqual(['llm-request', 'llm-response']);
      expect(events[0]).toMatchObject({ callId: 'call-1' });
      expect(events[1]).toMatchObject({ callId: 'call-1' });
    }
  });

  it('fails with invalid-response when a stream ends without a finish part', async () => {
    const backend: LlmBackend = {
      ...plainBackend(result('unused')),
      async *stream(): AsyncIterable<StreamPart> {
        yield { type: 'text-delta', text: 'half an ans' };
      },
    };
    const { events, context } = recorder(backend);
    const error = await callModel(context, ASK).catch((e: unknown) => e);
    expect(HarnessError.isInstance(error) && error.code).toBe('invalid-response');
    expect(events.map((e) => e.type)).toEqual(['llm-request', 'text-delta']);
  });
});

describe('llm-retry', () => {
  const notice = (attempt: number, delayMs: number) => ({
    attempt,
    delayMs,
    error: { code: 'rate-limited', message: `HTTP 429 (attempt ${attempt})` },
  });

  it('turns every onRetry notice of generate() into an llm-retry event of the call', async () => {
    const backend: LlmBackend = {
      ...plainBackend(result('after two retries')),
      async generate(request: GenerateRequest) {
        request.onRetry?.(notice(1, 500));
        request.onRetry?.(notice(2, 1000));
        return result('after two retries');
      },
    };
    const { events, context } = recorder(backend, { purpose: 'verify', scope: 'verify-1' });
    await callModel(context, ASK);
    expect(events.map((e) => e.type)).toEqual(['llm-request', 'llm-retry', 'llm-retry', 'llm-response']);
    expect(events.filter((e) => e.type === 'llm-retry')).toEqual([
      {
        type: 'llm-retry',
        runId: 'run-1',
        purpose: 'verify',
        scope: 'verify-1',
        callId: 'call-1',
        provider: 'fake',
        modelId: 'fake-1',
        attempt: 1,
        delayMs: 500,
        error: { code: 'rate-limited', message: 'HTTP 429 (attempt 1)' },
      },
      {
        type: 'llm-retry',
        runId: 'run-1',
        purpose: 'verify',
        scope: 'verify-1',
        callId: 'call-1',
        provider: 'fake',
        modelId: 'fake-1',
        attempt: 2,
        delayMs: 1000,
        error: { code: 'rate-limited', message: 'HTTP 429 (attempt 2)' },
      },
    ]);
  });

  it('passes onRetry to stream() too, and still calls an onRetry the caller set', async () => {
    const seen: number[] = [];
    const backend: LlmBackend = {
      ...plainBackend(result('unused')),
      async *stream(request: GenerateRequest): AsyncIterable<StreamPart> {
        request.onRetry?.(notice(1, 250));
        yield { type: 'text-delta', text: 'ok' };
        yield { type: 'finish', result: result('ok') };
      },
    };
    const { events, context } = recorder(backend);
    await callModel(context, { ...ASK, onRetry: (n) => seen.push(n.attempt) });
    expect(events.map((e) => e.type)).toEqual(['llm-request', 'llm-retry', 'text-delta', 'llm-response']);
    expect(events[1]).toMatchObject({ callId: 'call-1', attempt: 1, delayMs: 250 });
    expect(seen).toEqual([1]);
  });
});

describe('delta events of a run (runEventSender)', () => {
  it('drops deltas nobody listens to and never keeps them in the run log', () => {
    const bus = new HarnessEvents();
    const log: HarnessEvent[] = [];
    const emit = runEventSender(
      bus,
      () => 5,
      (event) => log.push(event),
    );
    const delta: EventInput = {
      type: 'text-delta',
      runId: 'r',
      purpose: 'execute',
      scope: 's',
      callId: 'c',
      text: 'x',
    };
    const seen: HarnessEvent[] = [];

    emit(delta);
    bus.on('text-delta', (e) => seen.push(e));
    emit(delta);
    emit({
      type: 'llm-retry',
      runId: 'r',
      purpose: 'execute',
      scope: 's',
      callId: 'c',
      provider: 'p',
      modelId: 'm',
      attempt: 1,
      delayMs: 1,
      error: { code: 'timeout', message: 't' },
    });

    expect(seen).toEqual([{ ...delta, timestamp: 5 }]);
    expect(log.map((e) => e.type)).toEqual(['llm-retry']);
  });
});

function plainBackend(answer: GenerateResult): LlmBackend {
  return { provider: 'fake', modelId: 'fake-1', contextWindow: 10_000, generate: async () => answer };
}
