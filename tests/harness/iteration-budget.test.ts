import { describe, expect, it } from 'vitest';
import type { GenerateRequest, GenerateResult } from '../../src/backend/types.js';
import { createHarness, type HarnessEvent } from '../../src/index.js';
import { IterationBudget } from '../../src/modes/shared/iteration-budget.js';
import { ScriptedBackend, planOf, submit, toolCall, verdict } from '../../src/testing/index.js';
import { collect, tempDir, textOf, writeFile } from './helpers.js';

const TASK = 'Collect three facts about owls and write owls.md with all of them.';

/** A loop step that makes its loop last exactly `iterations` model calls: tool calls, then a submit. */
function lasting(request: GenerateRequest, iterations: number, answer: string): GenerateResult {
  const rounds = request.messages.filter((m) => m.role === 'tool').length;
  return rounds + 1 < iterations
    ? toolCall('write_file', { path: 'notes.md', content: `round ${rounds}` })
    : submit(answer);
}

/** Model calls per loop scope, from the run's `llm-request` events. */
function iterationsByScope(events: readonly HarnessEvent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const event of events) {
    if (event.type !== 'llm-request' || !['execute', 'synthesize', 'repair'].includes(event.purpose)) continue;
    const scope = event.scope ?? '?';
    counts[scope] = (counts[scope] ?? 0) + 1;
  }
  return counts;
}

describe('limits.maxIterations bounds each loop, not the run', () => {
  it('gives every subtask attempt and the synthesis loop limits.maxIterations, and a repair limits.repairIterations', async () => {
    let verifies = 0;
    const backend = new ScriptedBackend((request): GenerateResult => {
      switch (request.purpose) {
        case 'plan':
          return planOf('Fact one', 'Fact two', 'Fact three');
        case 'verify':
          return (verifies += 1) === 1 ? verdict(false, ['Add the sources.']) : verdict(true);
        case 'repair':
          return lasting(request, 4, 'sources added');
        default:
          return lasting(request, 6, `${request.purpose} done`);
      }
    });
    const harness = createHarness({
      backend,
      tools: [writeFile],
      workspace: await tempDir(),
      limits: { maxIterations: 6, repairIterations: 4 },
    });
    const events = collect(harness);
    const result = await harness.run(TASK);
    // Under a run-wide pool of 6 the first subtask alone would have used it all.
    expect(result.status).toBe('succeeded');
    expect(iterationsByScope(events)).toEqual({
      'subtask-1': 6,
      'subtask-2': 6,
      'subtask-3': 6,
      synthesis: 6,
      'repair-1': 4,
    });
  });

  it('stops a loop at its own bound; its retry and the next subtask each get the whole bound again', async () => {
    const backend = new ScriptedBackend((request): GenerateResult => {
      if (request.purpose === 'plan') return planOf('Runaway', 'Second');
      if (request.purpose === 'execute' && textOf(request).includes('Subtask 1 of 2')) {
        return toolCall('write_file', { path: 'loop.md', content: 'again' });
      }
      return lasting(request, 3, `${request.purpose} done`);
    });
    const harness = createHarness({
      backend,
      tools: [writeFile],
      workspace: await tempDir(),
      verification: false,
      limits: { maxIterations: 3, subtaskAttempts: 2 },
    });
    const events = collect(harness);
    const result = await harness.run(TASK);
    expect(iterationsByScope(events)).toEqual({
      'subtask-1': 3,
      'subtask-1-attempt-2': 3,
      'subtask-2': 3,
      synthesis: 3,
    });
    expect(result.subtasks.map((s) => [s.status, s.attempts, s.errorCode])).toEqual([
      ['failed', 2, 'budget-exhausted'],
      ['completed', 1, undefined],
    ]);
    expect(result.subtasks[0]?.error).toContain('used its 3 iteration(s)');
    expect(result.status).toBe('succeeded');
  });
});

describe('limits.maxRunIterations, the optional cap over the whole run', () => {
  it('lets each loop use its bound or what the cap has left; used up, the run ends failed with budget-exhausted', async () => {
    const backend = new ScriptedBackend((request): GenerateResult => {
      if (request.purpose === 'plan') return planOf('First', 'Second');
      return lasting(request, 5, 'done');
    });
    const harness = createHarness({
      backend,
      tools: [writeFile],
      workspace: await tempDir(),
      limits: { maxIterations: 10, maxRunIterations: 7 },
    });
    const events = collect(harness);
    const result = await harness.run(TASK);
    // The first loop takes its 5; the second gets the 2 left, runs out, and no retry gets any.
    expect(iterationsByScope(events)).toEqual({ 'subtask-1': 5, 'subtask-2': 2 });
    expect(result).toMatchObject({ status: 'failed', error: { code: 'budget-exhausted' } });
    expect(result.error?.message).toBe(
      'The run used up limits.maxRunIterations (7 ReAct iterations over all its loops).',
    );
    expect(result.subtasks.map((s) => [s.status, s.attempts])).toEqual([
      ['completed', 1],
      ['failed', 1],
    ]);
    expect(result.deliverable.answer).toBe('done');
    expect(events.find((e) => e.type === 'run-error')).toMatchObject({ stage: 'execute' });
  });

  it('stops the run at the stage that finds the cap used up: no synthesis loop is started with nothing left', async () => {
    const backend = new ScriptedBackend((request): GenerateResult => {
      if (request.purpose === 'plan') return planOf('First', 'Second');
      return lasting(request, 2, 'done');
    });
    const harness = createHarness({
      backend,
      tools: [writeFile],
      workspace: await tempDir(),
      limits: { maxRunIterations: 4 },
    });
    const events = collect(harness);
    const result = await harness.run(TASK);
    expect(iterationsByScope(events)).toEqual({ 'subtask-1': 2, 'subtask-2': 2 });
    expect(result).toMatchObject({ status: 'failed', error: { code: 'budget-exhausted' } });
    expect(result.subtasks.map((s) => s.status)).toEqual(['completed', 'completed']);
    expect(events.find((e) => e.type === 'run-error')).toMatchObject({ stage: 'synthesize' });
  });

  it('is off by default: a run may use more iterations than one loop', async () => {
    const backend = new ScriptedBackend((request): GenerateResult => {
      if (request.purpose === 'plan') return planOf('First', 'Second');
      return lasting(request, 3, 'done');
    });
    const harness = createHarness({
      backend,
      tools: [writeFile],
      workspace: await tempDir(),
      verification: false,
      limits: { maxIterations: 3 },
    });
    const events = collect(harness);
    const result = await harness.run(TASK);
    expect(result.status).toBe('succeeded');
    expect(iterationsByScope(events)).toEqual({ 'subtask-1': 3, 'subtask-2': 3, synthesis: 3 });
  });
});

describe('IterationBudget', () => {
  it('without a cap gives every loop its whole bound', () => {
    const budget = new IterationBudget(undefined);
    budget.spend(10_000);
    expect(budget.take(200)).toBe(200);
    expect(budget.take(50)).toBe(50);
    expect(budget.left).toBe(Number.POSITIVE_INFINITY);
  });

  it('with a cap gives the bound or what is left, holding each allowance until it is released', () => {
    const budget = new IterationBudget(300);
    const first = budget.take(200);
    const second = budget.take(200);
    // Loops running at the same time never hold more together than the cap has.
    expect([first, second]).toEqual([200, 100]);
    expect(budget.take(200)).toBe(0);
    budget.spend(30);
    budget.release(first);
    budget.release(second);
    expect(budget.left).toBe(270);
    // A loop that runs alone (synthesis, a repair) is only told its allowance.
    expect(budget.allowance(500)).toBe(270);
    expect(budget.left).toBe(270);
    budget.spend(265);
    expect(budget.allowance(50)).toBe(5);
  });
});
