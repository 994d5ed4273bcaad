import { describe, expect, it } from 'vitest';
import type { EventInput } from '../../src/events.js';
import { Planner } from '../../src/planner/planner.js';
import { planOf, reply } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';

describe('Planner', () => {
  it('returns ids in plan order, sets purpose plan and emits request/response events', async () => {
    const backend = new ScriptedBackend({ plan: [planOf('Find', { title: 'Write', objective: 'write it', expectedOutput: 'out.md' })] });
    const events: EventInput[] = [];
    const outcome = await new Planner({ backend, emit: (e) => events.push(e) }).plan({
      request: 'Do the thing',
      attachments: ['attachments/a.csv'],
      runId: 'r1',
    });
    expect(outcome.subtasks).toEqual([
      { id: 'subtask-1', title: 'Find', objective: 'Find', expectedOutput: 'The result of: Find' },
      { id: 'subtask-2', title: 'Write', objective: 'write it', expectedOutput: 'out.md' },
    ]);
    expect(outcome.fallback).toBeUndefined();
    const prompt = backend.calls[0]!;
    expect(prompt.purpose).toBe('plan');
    expect(JSON.stringify(prompt.messages)).toContain('attachments/a.csv');
    expect(prompt.messages[0]?.content).toContain('at most 6 subtasks');
    expect(events.map((e) => e.type)).toEqual(['llm-request', 'llm-response']);
    expect(events[0]).toMatchObject({ runId: 'r1', purpose: 'plan', scope: 'plan' });
  });

  it('falls back to a single subtask after one failed re-ask', async () => {
    const backend = new ScriptedBackend({ plan: [reply('?'), reply('{"subtasks":"many"}')] });
    const outcome = await new Planner({ backend }).plan({ request: 'Do the thing' });
    expect(outcome.fallback).toBe('single-subtask');
    expect(outcome.subtasks).toHaveLength(1);
    expect(outcome.reason).toContain('subtasks');
  });

  it('rejects an invalid maxSubtasks', async () => {
    const planner = new Planner({ backend: new ScriptedBackend([]) });
    await expect(planner.plan({ request: 'x', maxSubtasks: 0 })).rejects.toMatchObject({ code: 'invalid-input' });
  });
});
