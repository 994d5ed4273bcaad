import { describe, expect, it } from 'vitest';
import { capPlan, normaliseDependsOn } from '../../src/handoff/plan.js';
import { Planner } from '../../src/planner/planner.js';
import { PLANNER_PROMPT } from '../../src/prompts/planner.js';
import { dependenciesOf, startableSubtasks } from '../../src/modes/pipeline/subtask-schedule.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { reply } from '../../src/testing/replies.js';

const draft = (title: string, dependsOn?: unknown) => ({
  title,
  objective: title,
  expectedOutput: '',
  ...(dependsOn === undefined ? {} : { dependsOn }),
});

describe('dependsOn in the plan protocol', () => {
  it('normalises a list of earlier indices: integers, de-duplicated, ascending', () => {
    expect(normaliseDependsOn([2, 0, 2, 1], 3)).toEqual([0, 1, 2]);
    expect(normaliseDependsOn([], 3)).toEqual([]);
    expect(normaliseDependsOn(undefined, 3)).toBeUndefined();
    expect(normaliseDependsOn(null, 3)).toBeUndefined();
  });

  it.each([
    ['itself', [1]],
    ['a later subtask', [2]],
    ['a negative index', [-1]],
    ['a fraction', [0.5]],
    ['a string', ['0']],
    ['a number instead of a list', 0],
    ['an object', { 0: true }],
  ])('distrusts a dependsOn naming %s', (_label, value) => {
    expect(normaliseDependsOn(value, 1)).toBe('invalid');
  });

  it('makes a subtask with an invalid dependsOn depend on every earlier one, and says so in the reason', () => {
    const capped = capPlan([draft('a', []), draft('b', [5]), draft('c', [0])], 6);
    expect(capped.subtasks.map((s) => s.dependsOn)).toEqual([[], undefined, [0]]);
    expect(capped.subtasks[1]).not.toHaveProperty('dependsOn');
    expect(capped.truncated).toBe(false);
    expect(capped.reason).toBe(
      'subtask 1 listed [5] in dependsOn, which is not a list of earlier subtask indices; it depends on every earlier ' +
        'subtask instead.',
    );
    expect(dependenciesOf(capped.subtasks, 1)).toEqual([0]);
  });

  it('leaves a plan without dependsOn as it was: every subtask depends on all earlier ones', () => {
    const capped = capPlan([draft('a'), draft('b'), draft('c')], 6);
    expect(capped).toEqual({
      truncated: false,
      subtasks: [
        { id: 'subtask-1', title: 'a', objective: 'a', expectedOutput: '' },
        { id: 'subtask-2', title: 'b', objective: 'b', expectedOutput: '' },
        { id: 'subtask-3', title: 'c', objective: 'c', expectedOutput: '' },
      ],
    });
    expect(dependenciesOf(capped.subtasks, 2)).toEqual([0, 1]);
    expect(startableSubtasks(capped.subtasks, new Set(), new Set(), 3)).toEqual([0]);
  });

  it('starts, in plan order, the subtasks whose dependencies finished, at most as many as there are slots', () => {
    const plan = capPlan(
      [draft('a', []), draft('b', []), draft('c', [0]), draft('d', [1]), draft('e', [])],
      6,
    ).subtasks;
    expect(startableSubtasks(plan, new Set(), new Set(), 2)).toEqual([0, 1]);
    expect(startableSubtasks(plan, new Set(), new Set([0, 1]), 1)).toEqual([4]);
    expect(startableSubtasks(plan, new Set([1]), new Set([0]), 2)).toEqual([3, 4]);
  });

  it('keeps the truncation reason of a plan that was too long, and names a distrusted dependsOn after it', () => {
    const capped = capPlan([draft('a'), draft('b', [3]), draft('c')], 2);
    expect(capped.truncated).toBe(true);
    expect(capped.reason).toBe(
      'The planner returned 3 subtasks; kept the first 2 (limits.maxSubtasks); subtask 1 listed [3] in dependsOn, ' +
        'which is not a list of earlier subtask indices; it depends on every earlier subtask instead.',
    );
  });
});

describe('Planner and dependsOn', () => {
  it('asks for dependsOn, and passes a valid one on', async () => {
    expect(PLANNER_PROMPT).toContain('"dependsOn"');
    const backend = new ScriptedBackend({
      plan: [reply(JSON.stringify({ subtasks: [draft('a', []), draft('b', []), draft('c', [1, 0])] }))],
    });
    const outcome = await new Planner({ backend }).plan({ request: 'r' });
    expect(outcome.subtasks.map((s) => s.dependsOn)).toEqual([[], [], [0, 1]]);
    expect(outcome.fallback).toBeUndefined();
    expect(outcome.reason).toBeUndefined();
    expect(backend.calls[0]?.messages[0]?.content).toContain('"dependsOn"');
  });

  it('keeps a plan whose dependsOn is malformed, without re-asking, and says what it distrusted', async () => {
    const backend = new ScriptedBackend({
      plan: [reply(JSON.stringify({ subtasks: [draft('a', 'none'), draft('b', [0])] }))],
    });
    const outcome = await new Planner({ backend }).plan({ request: 'r' });
    expect(backend.calls).toHaveLength(1);
    expect(outcome.subtasks.map((s) => s.dependsOn)).toEqual([undefined, [0]]);
    expect(outcome.fallback).toBeUndefined();
    expect(outcome.reason).toContain('subtask 0 listed "none" in dependsOn');
  });
});
