import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { GenerateRequest, GenerateResult } from '../../src/backend/types.js';
import { HarnessError } from '../../src/errors.js';
import { createHarness, defineTool, type HarnessEvent } from '../../src/index.js';
import { instrument } from '../../src/otel/index.js';
import { ScriptedBackend, planOf, reply, submit, toolCall, verdict } from '../../src/testing/index.js';
import { hang, tempDir, writeFile } from '../harness/helpers.js';
import { everyRecordedText, inMemoryTracing, parentOf, renderTree, spanNamed, tickingClock } from './helpers.js';

const TASK = 'Collect two facts about owls and write owls.md with both.';

/** A result with the usage a provider would report. */
function withUsage(
  result: GenerateResult,
  inputTokens: number,
  outputTokens: number,
  cache: { cachedInputTokens?: number; cacheWriteInputTokens?: number } = {},
): GenerateResult {
  return { ...result, usage: { inputTokens, outputTokens, ...cache } };
}

const stops: Array<() => void> = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
  vi.unstubAllEnvs();
});

async function traced(harness: Parameters<typeof instrument>[0], options: Parameters<typeof instrument>[1]) {
  const stop = await instrument(harness, options);
  stops.push(stop);
  return stop;
}

describe('instrument: a pipeline run', () => {
  it('builds the span tree of the run with the GenAI names and attributes', async () => {
    const backend = new ScriptedBackend({
      plan: [planOf('gather', 'write')],
      execute: [
        withUsage(toolCall('write_file', { path: 'owls.md', content: 'Owls hoot.' }, 'call-w'), 120, 30),
        withUsage(submit('Owls hoot.', ['owls.md']), 150, 12, { cachedInputTokens: 100, cacheWriteInputTokens: 40 }),
        submit('Owls fly silently.'),
      ],
      synthesize: [submit('Owls hoot and fly silently.', ['owls.md'])],
      verify: [verdict(true)],
    });
    const harness = createHarness({ backend, tools: [writeFile], workspace: await tempDir(), now: tickingClock() });
    const { tracer, spans } = inMemoryTracing();
    await traced(harness, { tracer });

    const result = await harness.run({ task: TASK, runId: 'run-owls' });
    expect(result.status).toBe('succeeded');

    const all = spans();
    expect(renderTree(all)).toBe(
      [
        'invoke_agent horizon-harness',
        '  plan',
        '    chat scripted',
        '  execute',
        '    subtask-1',
        '      chat scripted',
        '      execute_tool write_file',
        '      chat scripted',
        '      execute_tool submit_answer',
        '    subtask-2',
        '      chat scripted',
        '      execute_tool submit_answer',
        '  synthesize',
        '    chat scripted',
        '    execute_tool submit_answer',
        '  verify',
        '    chat scripted',
      ].join('\n'),
    );
    expect(new Set(all.map((s) => s.spanContext().traceId)).size).toBe(1);

    const run = spanNamed(all, 'invoke_agent horizon-harness');
    expect(run.kind).toBe(SpanKind.INTERNAL);
    expect(run.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'horizon-harness',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.conversation.id': 'run-owls',
      'horizon_harness.run.id': 'run-owls',
      'horizon_harness.mode': 'pipeline',
      'horizon_harness.status': 'succeeded',
    });
    expect(spanNamed(all, 'plan').attributes['horizon_harness.plan.subtasks']).toBe(2);
    expect(run.status.code).toBe(SpanStatusCode.UNSET);

    const firstExecute = spanNamed(all, 'chat scripted', 1);
    expect(firstExecute.kind).toBe(SpanKind.CLIENT);
    expect(firstExecute.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'scripted',
      'gen_ai.request.temperature': 1,
      'gen_ai.request.top_p': 0.95,
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 30,
      'gen_ai.response.finish_reasons': ['tool_call'],
      'gen_ai.conversation.id': 'run-owls',
      'horizon_harness.purpose': 'execute',
      'horizon_harness.scope': 'subtask-1',
    });
    expect(firstExecute.attributes['gen_ai.request.max_tokens']).toBeGreaterThan(0);
    // A provider that reports no cache figures gets no cache attributes; one that does, both.
    expect(firstExecute.attributes['gen_ai.usage.cache_read.input_tokens']).toBeUndefined();
    expect(firstExecute.attributes['gen_ai.usage.cache_creation.input_tokens']).toBeUndefined();
    expect(spanNamed(all, 'chat scripted', 2).attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 150,
      'gen_ai.usage.cache_read.input_tokens': 100,
      'gen_ai.usage.cache_creation.input_tokens': 40,
    });
    expect(spanNamed(all, 'chat scripted', 0).attributes['horizon_harness.purpose']).toBe('plan');

    const tool = spanNamed(all, 'execute_tool write_file');
    expect(tool.kind).toBe(SpanKind.INTERNAL);
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'write_file',
      'gen_ai.tool.call.id': 'call-w',
      'gen_ai.tool.type': 'function',
      'horizon_harness.tool.files': 1,
    });
    expect(tool.status.code).toBe(SpanStatusCode.UNSET);
    expect(parentOf(all, tool)?.attributes['horizon_harness.subtask.id']).toBe('subtask-1');

    // The run span adds up the usage of its model calls.
    const chats = all.filter((s) => s.name.startsWith('chat '));
    const sum = (key: string) => chats.reduce((total, s) => total + Number(s.attributes[key]), 0);
    expect(run.attributes['gen_ai.usage.input_tokens']).toBe(sum('gen_ai.usage.input_tokens'));
    expect(run.attributes['gen_ai.usage.output_tokens']).toBe(sum('gen_ai.usage.output_tokens'));
    expect(spanNamed(all, 'verify').attributes).toMatchObject({ 'horizon_harness.verify.passed': true });
  });

  it('records a failed run: the retry, the tool error, the call that never returned, the failed subtask and stage', async () => {
    const scripted = new ScriptedBackend({
      execute: [toolCall('no_such_tool', {}), new HarnessError('authentication', 'The provider rejected the key.')],
    });
    let calls = 0;
    const backend = {
      provider: scripted.provider,
      modelId: scripted.modelId,
      contextWindow: scripted.contextWindow,
      generate: (request: GenerateRequest) => {
        calls += 1;
        if (calls === 2)
          request.onRetry?.({ attempt: 1, delayMs: 250, error: { code: 'rate-limited', message: 'Slow down.' } });
        return scripted.generate(request);
      },
    };
    const harness = createHarness({
      backend,
      decomposition: false,
      verification: false,
      workspace: await tempDir(),
      now: tickingClock(),
    });
    const { tracer, spans } = inMemoryTracing();
    await traced(harness, { tracer });

    const result = await harness.run(TASK);
    expect(result.status).toBe('failed');

    const all = spans();
    expect(renderTree(all)).toBe(
      [
        'invoke_agent horizon-harness',
        '  execute',
        '    subtask-1',
        '      chat scripted',
        '      execute_tool no_such_tool',
        '      chat scripted',
      ].join('\n'),
    );
    expect(all.every((s) => s.ended)).toBe(true);

    const tool = spanNamed(all, 'execute_tool no_such_tool');
    expect(tool.status.code).toBe(SpanStatusCode.ERROR);
    expect(tool.attributes['error.type']).toBe('tool_error');

    const failedCall = spanNamed(all, 'chat scripted', 1);
    expect(failedCall.status.code).toBe(SpanStatusCode.ERROR);
    expect(failedCall.attributes['gen_ai.usage.input_tokens']).toBeUndefined();
    expect(failedCall.events.find((e) => e.name === 'horizon_harness.llm.retry')?.attributes).toMatchObject({
      'horizon_harness.attempt': 1,
      'horizon_harness.retry.delay_ms': 250,
      'error.type': 'rate-limited',
    });

    expect(spanNamed(all, 'subtask-1').attributes['error.type']).toBe('subtask_failed');
    for (const name of ['execute', 'invoke_agent horizon-harness']) {
      const span = spanNamed(all, name);
      expect(span.status.code, name).toBe(SpanStatusCode.ERROR);
      expect(span.attributes['error.type'], name).toBe('authentication');
      expect(
        span.events.some((e) => e.name === 'exception'),
        name,
      ).toBe(true);
    }
  });

  it('records a run without a usable verdict as an error of its verify span and of the run', async () => {
    const malformed = () => reply('Looks fine.');
    const backend = new ScriptedBackend({
      execute: [submit('done')],
      verify: [malformed(), malformed(), malformed(), malformed()],
    });
    const harness = createHarness({ backend, decomposition: false, workspace: await tempDir(), now: tickingClock() });
    const { tracer, spans } = inMemoryTracing();
    await traced(harness, { tracer });
    const result = await harness.run(TASK);
    expect(result.status).toBe('unverified');
    const all = spans();
    for (const name of ['verify', 'invoke_agent horizon-harness']) {
      const span = spanNamed(all, name);
      expect(span.status.code, name).toBe(SpanStatusCode.ERROR);
      expect(span.attributes['error.type'], name).toBe('verification-unavailable');
    }
    expect(spanNamed(all, 'invoke_agent horizon-harness').attributes['horizon_harness.status']).toBe('unverified');
  });

  it('ends every open span of an aborted run, the hanging tool call as an error', async () => {
    const backend = new ScriptedBackend({ execute: [toolCall('hang', {})] });
    const harness = createHarness({
      backend,
      tools: [hang],
      decomposition: false,
      verification: false,
      workspace: await tempDir(),
    });
    const { tracer, spans } = inMemoryTracing();
    await traced(harness, { tracer });
    const controller = new AbortController();
    harness.on('tool-call', () => setTimeout(() => controller.abort(), 5));

    const result = await harness.run({ task: TASK, signal: controller.signal });
    expect(result.status).toBe('aborted');

    const all = spans();
    expect(all.map((s) => s.name).sort()).toEqual(
      ['chat scripted', 'execute', 'execute_tool hang', 'invoke_agent horizon-harness', 'subtask-1'].sort(),
    );
    expect(spanNamed(all, 'execute_tool hang').status.code).toBe(SpanStatusCode.ERROR);
    expect(spanNamed(all, 'invoke_agent horizon-harness').attributes).toMatchObject({
      'horizon_harness.status': 'aborted',
      'error.type': 'aborted',
    });
  });
});

describe('instrument: stopping', () => {
  it('ends the spans of a run in flight and traces nothing after', async () => {
    const backend = new ScriptedBackend({ execute: [toolCall('hang', {})] });
    const harness = createHarness({
      backend,
      tools: [hang],
      decomposition: false,
      verification: false,
      workspace: await tempDir(),
    });
    const { tracer, spans } = inMemoryTracing();
    const stop = await traced(harness, { tracer });
    const controller = new AbortController();
    let endedAtStop = 0;
    harness.on('tool-call', () => {
      stop();
      endedAtStop = spans().length;
      setTimeout(() => controller.abort(), 5);
    });

    await harness.run({ task: TASK, signal: controller.signal });

    expect(endedAtStop).toBe(5);
    expect(spans().map((s) => s.name)).toContain('invoke_agent horizon-harness');
    expect(spans()).toHaveLength(endedAtStop);
  });
});

describe('instrument: content', () => {
  const MARKER = 'OWL-MARKER-7781';

  function contentRun() {
    return new ScriptedBackend({
      execute: [toolCall('write_file', { path: 'owls.md', content: MARKER }), submit(`Wrote ${MARKER}.`)],
    });
  }

  it('records no prompt, reply, goal or tool argument by default', async () => {
    const harness = createHarness({
      backend: contentRun(),
      tools: [writeFile],
      decomposition: false,
      verification: false,
      workspace: await tempDir(),
    });
    const { tracer, spans } = inMemoryTracing();
    await traced(harness, { tracer });
    const requests: HarnessEvent[] = [];
    harness.on('llm-request', (e) => requests.push(e));

    await harness.run(`${TASK} ${MARKER}`);

    const all = spans();
    expect(all.length).toBeGreaterThan(3);
    expect(everyRecordedText(all)).not.toContain(MARKER);
    expect(
      all
        .flatMap((s) => Object.keys(s.attributes))
        .filter((k) => /^gen_ai\.(input|output|tool\.call\.arguments)/.test(k)),
    ).toEqual([]);
    expect(requests.every((e) => !('content' in e))).toBe(true);
  });

  it('records them on request, with credentials redacted, and stops when stopped', async () => {
    vi.stubEnv('OWL_SERVICE_API_KEY', 'sk-owl-5e5e5e5e5e5e5e5e5e');
    const harness = createHarness({
      backend: contentRun(),
      tools: [writeFile],
      decomposition: false,
      verification: false,
      workspace: await tempDir(),
    });
    const { tracer, spans } = inMemoryTracing();
    const stop = await traced(harness, { tracer, captureContent: true, secrets: ['hunter2-owl-password'] });
    const requests: HarnessEvent[] = [];
    harness.on('llm-request', (e) => requests.push(e));

    await harness.run(`${TASK} ${MARKER} key sk-owl-5e5e5e5e5e5e5e5e5e pass hunter2-owl-password`);

    const all = spans();
    const firstCall = spanNamed(all, 'chat scripted');
    const input = JSON.parse(String(firstCall.attributes['gen_ai.input.messages']));
    expect(input[0].role).toBe('system');
    expect(JSON.stringify(input)).toContain(MARKER);
    expect(JSON.parse(String(firstCall.attributes['gen_ai.output.messages']))).toEqual([
      {
        role: 'assistant',
        parts: [
          {
            type: 'tool_call',
            id: expect.any(String),
            name: 'write_file',
            arguments: { path: 'owls.md', content: MARKER },
          },
        ],
        finish_reason: 'tool_call',
      },
    ]);
    expect(spanNamed(all, 'execute_tool write_file').attributes['gen_ai.tool.call.arguments']).toContain(MARKER);
    const run = spanNamed(all, 'invoke_agent horizon-harness');
    expect(String(run.attributes['gen_ai.input.messages'])).toContain(MARKER);
    expect(String(run.attributes['gen_ai.output.messages'])).toContain(`Wrote ${MARKER}.`);

    const recorded = everyRecordedText(all);
    expect(recorded).not.toContain('sk-owl-5e5e5e5e5e5e5e5e5e');
    expect(recorded).not.toContain('hunter2-owl-password');
    expect(recorded).toContain('[REDACTED]');
    expect(requests.every((e) => 'content' in e)).toBe(true);

    // Other listeners see content only while it is captured.
    stop();
    requests.length = 0;
    await harness.run({ task: TASK, runId: 'after-stop' });
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.every((e) => !('content' in e))).toBe(true);
    expect(spans().some((s) => s.attributes['gen_ai.conversation.id'] === 'after-stop')).toBe(false);
  });
});

describe('instrument: concurrent runs', () => {
  it('keeps each run in its own trace', async () => {
    // Both runs wait in this tool until both are in it, so their events interleave.
    let arrived = 0;
    let release: () => void = () => {};
    const together = new Promise<void>((resolve) => {
      release = resolve;
    });
    const meet = defineTool({
      name: 'meet',
      description: 'Waits for the other run.',
      input: z.object({}),
      execute: async () => {
        arrived += 1;
        if (arrived === 2) release();
        await together;
        return 'met';
      },
    });
    const backend = new ScriptedBackend({
      execute: [toolCall('meet', {}), toolCall('meet', {}), submit('a'), submit('b')],
    });
    const harness = createHarness({ backend, tools: [meet], decomposition: false, verification: false });
    const { tracer, spans } = inMemoryTracing();
    await traced(harness, { tracer });

    await Promise.all([harness.run({ task: TASK, runId: 'run-a' }), harness.run({ task: TASK, runId: 'run-b' })]);

    const all = spans();
    const roots = all.filter((s) => s.name === 'invoke_agent horizon-harness');
    expect(roots.map((s) => s.attributes['horizon_harness.run.id']).sort()).toEqual(['run-a', 'run-b']);
    for (const root of roots) {
      const runId = root.attributes['horizon_harness.run.id'];
      const inTrace = all.filter((s) => s.spanContext().traceId === root.spanContext().traceId);
      expect(renderTree(inTrace)).toBe(
        [
          'invoke_agent horizon-harness',
          '  execute',
          '    subtask-1',
          '      chat scripted',
          '      execute_tool meet',
          '      chat scripted',
          '      execute_tool submit_answer',
          // One completed subtask is the deliverable: synthesis-finish comes without a model call.
          '  synthesize',
        ].join('\n'),
      );
      for (const span of inTrace.filter((s) => s.attributes['gen_ai.conversation.id'] !== undefined)) {
        expect(span.attributes['gen_ai.conversation.id']).toBe(runId);
      }
    }
  });
});
