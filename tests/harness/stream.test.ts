import { describe, expect, it } from 'vitest';
import type { GenerateRequest } from '../../src/backend/types.js';
import { HarnessError } from '../../src/errors.js';
import type { HarnessEvent } from '../../src/events.js';
import { createHarness } from '../../src/harness/harness.js';
import type { RunStream } from '../../src/harness/run-stream.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { submit, toolCall } from '../../src/testing/replies.js';
import { hang, tempDir, textOf } from './helpers.js';

/** Answers each run after its own task, so concurrent runs can share one backend. */
function echoBackend() {
  return new ScriptedBackend(
    (request: GenerateRequest) => submit(`answer to ${/task (\w+)/.exec(textOf(request))?.[1]}`),
    {
      stream: true,
    },
  );
}

async function drain(stream: RunStream): Promise<HarnessEvent[]> {
  const events: HarnessEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('harness.stream()', () => {
  it('yields the events of its own run only, live deltas included, and ends with run-finish carrying the result', async () => {
    // No workspace option: each concurrent run gets its own temporary one, removed by close().
    const harness = createHarness({ backend: echoBackend(), decomposition: false, verification: false });
    const everything: HarnessEvent[] = [];
    harness.onAny((event) => everything.push(event));

    const alpha = harness.stream({ task: 'task alpha', runId: 'run-alpha' });
    const beta = harness.stream('task beta');
    const [alphaEvents, betaEvents] = await Promise.all([drain(alpha), drain(beta)]);

    expect(alpha.runId).toBe('run-alpha');
    expect(beta.runId).not.toBe('run-alpha');
    for (const [stream, events] of [
      [alpha, alphaEvents],
      [beta, betaEvents],
    ] as const) {
      expect(events.every((e) => e.runId === stream.runId)).toBe(true);
      // Exactly what on/onAny saw for this run, in the same order.
      expect(events).toEqual(everything.filter((e) => e.runId === stream.runId));
      expect(events[0]?.type).toBe('run-start');
      expect(events.some((e) => e.type === 'tool-call-delta')).toBe(true);
      const last = events.at(-1);
      expect(last?.type).toBe('run-finish');
      const result = await stream.result;
      expect(last?.type === 'run-finish' && last.result).toBe(result);
    }
    expect((await alpha.result).deliverable.answer).toBe('answer to alpha');
    expect((await beta.result).deliverable.answer).toBe('answer to beta');
    await harness.close();
  });

  it('aborts the run when the consumer leaves the loop early', async () => {
    const backend = new ScriptedBackend({ execute: [toolCall('hang', {}, 'call-hang')] }, { stream: true });
    const harness = createHarness({
      backend,
      tools: [hang],
      decomposition: false,
      verification: false,
      workspace: await tempDir(),
    });
    const finished: string[] = [];
    harness.on('run-finish', (e) => finished.push(e.result.status));

    const stream = harness.stream('task hang');
    const seen: string[] = [];
    for await (const event of stream) {
      seen.push(event.type);
      if (event.type === 'tool-call') break;
    }

    const result = await stream.result;
    expect(result.status).toBe('aborted');
    expect(finished).toEqual(['aborted']);
    expect(seen.at(-1)).toBe('tool-call');
    expect(seen).not.toContain('run-finish');
  });

  it('aborts through the signal of its input, like run()', async () => {
    const backend = new ScriptedBackend({ execute: [toolCall('hang', {}, 'call-hang')] }, { stream: true });
    const harness = createHarness({
      backend,
      tools: [hang],
      decomposition: false,
      verification: false,
      workspace: await tempDir(),
    });
    const controller = new AbortController();
    const stream = harness.stream({ task: 'task hang', signal: controller.signal });
    const types: string[] = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'tool-call') controller.abort();
    }
    expect(types.at(-1)).toBe('run-finish');
    expect((await stream.result).status).toBe('aborted');
  });

  it('ends the loop with the error, and rejects result, when run() rejects (invalid input)', async () => {
    const harness = createHarness({ backend: echoBackend(), workspace: await tempDir() });
    const stream = harness.stream({ task: '   ' });

    const thrown = await drain(stream).catch((error: unknown) => error);
    expect(HarnessError.isInstance(thrown) && thrown.code).toBe('invalid-input');
    const rejected = await stream.result.catch((error: unknown) => error);
    expect(rejected).toBe(thrown);
  });
});
