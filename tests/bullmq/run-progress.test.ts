import { afterEach, describe, expect, it, vi } from 'vitest';
import { nextProgress, ProgressThrottle, type RunProgress } from '../../src/bullmq/run-progress.js';
import type { HarnessEvent } from '../../src/events.js';

const start: RunProgress = { runId: 'r', stage: 'start', iteration: 0, toolCalls: 0, resumed: false };
const at = { runId: 'r', timestamp: 0 };

function fold(events: object[]): RunProgress {
  return events.reduce<RunProgress>((p, e) => nextProgress(p, e as HarnessEvent) ?? p, start);
}

describe('run progress from harness events', () => {
  it('follows stage, subtask and ReAct iterations through a pipeline run', () => {
    const progress = fold([
      { ...at, type: 'run-start' },
      { ...at, type: 'llm-request', purpose: 'plan' },
      { ...at, type: 'plan-created', plan: [{ title: 'a' }, { title: 'b' }] },
      { ...at, type: 'subtask-start', index: 1, subtask: { title: 'b' } },
      { ...at, type: 'llm-request', purpose: 'execute', scope: 'subtask-2' },
      { ...at, type: 'tool-call', purpose: 'execute', toolName: 'x' },
      { ...at, type: 'llm-request', purpose: 'summarize' },
    ]);
    expect(progress).toEqual({
      runId: 'r',
      stage: 'execute',
      subtasks: 2,
      subtask: { index: 2, title: 'b' },
      iteration: 1,
      toolCalls: 1,
      resumed: false,
    });
  });

  it('says when the run went on from a snapshot, and how it ended', () => {
    const progress = fold([
      { ...at, type: 'run-resume', stage: 'synthesize', redo: {} },
      { ...at, type: 'run-finish', result: { status: 'succeeded' } },
    ]);
    expect(progress).toMatchObject({ stage: 'finished', status: 'succeeded', resumed: true });
  });

  it('ignores events that change nothing reported', () => {
    expect(nextProgress(start, { ...at, type: 'text-delta', purpose: 'execute', callId: 'c', text: 'x' })).toBe(
      undefined,
    );
  });
});

describe('ProgressThrottle', () => {
  afterEach(() => vi.useRealTimers());

  it('sends the first update at once, then at most one per interval, and always the last one', async () => {
    vi.useFakeTimers();
    const sent: number[] = [];
    const throttle = new ProgressThrottle(
      async (p) => {
        sent.push(p.iteration);
      },
      1_000,
      () => undefined,
      () => Date.now(),
    );
    for (let i = 1; i <= 5; i += 1) throttle.update({ ...start, iteration: i });
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toEqual([1]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(sent).toEqual([1, 5]);
    throttle.update({ ...start, iteration: 6 });
    await throttle.stop();
    expect(sent).toEqual([1, 5, 6]);
    throttle.update({ ...start, iteration: 7 });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(sent).toEqual([1, 5, 6]);
  });

  it('hands a failed send to onError instead of failing the run', async () => {
    const errors: unknown[] = [];
    const throttle = new ProgressThrottle(
      () => Promise.reject(new Error('Missing key for job r')),
      0,
      (e) => errors.push(e),
    );
    throttle.update(start);
    await throttle.stop();
    expect(errors).toEqual([expect.objectContaining({ message: 'Missing key for job r' })]);
  });
});
