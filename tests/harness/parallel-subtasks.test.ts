import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GenerateRequest, GenerateResult, Message } from '../../src/backend/types.js';
import { HarnessError } from '../../src/errors.js';
import type { HarnessEvent } from '../../src/events.js';
import { createHarness } from '../../src/harness/harness.js';
import type { HarnessOptions } from '../../src/modes/shared/options.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { reply, submit, toolCall } from '../../src/testing/replies.js';
import { sequentialTrace } from './fixtures/sequential-trace.js';
import type { RunSnapshot } from '../../src/durability/types.js';
import { scenarioTools } from '../durability/fixtures/scenario.js';
import { MemoryRunStore } from '../durability/memory-store.js';
import { collect, tempDir, writeFile } from './helpers.js';

type Draft = { title: string; dependsOn?: unknown };

/** A planner reply with `dependsOn` where given. */
function planWith(...subtasks: Draft[]): GenerateResult {
  return reply(
    JSON.stringify({
      subtasks: subtasks.map((s) => ({ objective: s.title, expectedOutput: `result of ${s.title}`, ...s })),
    }),
  );
}

function textOf(message: Message | undefined): string {
  if (!message) return '';
  return typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
}

/** The first user message of a request: the original request, the objective and the prior state. */
function taskOf(request: GenerateRequest): string {
  return textOf(request.messages.find((m) => m.role === 'user'));
}

/** The 1-based number of the subtask an execute request works on. */
function subtaskOf(request: GenerateRequest): number {
  return Number(/Subtask (\d+) of \d+:/.exec(taskOf(request))?.[1]);
}

/** A promise with its resolver. */
function gate<T = void>() {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** The subtasks running after each start and finish, from the events. */
function runningOver(events: readonly HarnessEvent[]): number[][] {
  const running = new Set<number>();
  const over: number[][] = [];
  for (const event of events) {
    if (event.type === 'subtask-start') running.add(event.index);
    else if (event.type === 'subtask-finish') running.delete(Number(event.record.id.split('-')[1]) - 1);
    else continue;
    over.push([...running].sort());
  }
  return over;
}

function harnessFor(
  backend: ScriptedBackend,
  dir: string,
  limits: HarnessOptions['limits'] = {},
  extra: Partial<HarnessOptions> = {},
) {
  return createHarness({ backend, tools: [writeFile], workspace: dir, verification: false, limits, ...extra });
}

describe('parallel subtasks', () => {
  it('runs independent subtasks at the same time and a dependent only after its dependencies finished', async () => {
    // Subtask 1 answers only once subtask 2 has asked the model too: the two must be in flight together.
    const secondAsked = gate();
    const backend = new ScriptedBackend(async (request) => {
      if (request.purpose === 'plan') {
        return planWith(
          { title: 'A', dependsOn: [] },
          { title: 'B', dependsOn: [] },
          { title: 'C', dependsOn: [0] },
          { title: 'D', dependsOn: [1] },
        );
      }
      if (request.purpose === 'synthesize') return submit('all four');
      const n = subtaskOf(request);
      if (n === 2) secondAsked.open();
      if (n === 1) await secondAsked.promise;
      return submit(`answer ${n}`);
    });
    const harness = harnessFor(backend, await tempDir(), { maxParallelSubtasks: 2 });
    const events = collect(harness);
    const result = await harness.run('Research A and B, then use each.');

    expect(result.status).toBe('succeeded');
    expect(result.subtasks.map((s) => s.id)).toEqual(['subtask-1', 'subtask-2', 'subtask-3', 'subtask-4']);
    const order = events.flatMap((e) =>
      e.type === 'subtask-start' ? [`start ${e.index}`] : e.type === 'subtask-finish' ? [`finish ${e.record.id}`] : [],
    );
    expect(order.slice(0, 2)).toEqual(['start 0', 'start 1']);
    // A dependent never starts before its dependency finished.
    expect(order.indexOf('start 2')).toBeGreaterThan(order.indexOf('finish subtask-1'));
    expect(order.indexOf('start 3')).toBeGreaterThan(order.indexOf('finish subtask-2'));
    // Never more than maxParallelSubtasks at once.
    expect(Math.max(...runningOver(events).map((r) => r.length))).toBe(2);
  });

  it('runs no more subtasks at once than maxParallelSubtasks, starting them in plan order', async () => {
    const backend = new ScriptedBackend(async (request) => {
      if (request.purpose === 'plan')
        return planWith(...['A', 'B', 'C', 'D'].map((title) => ({ title, dependsOn: [] })));
      if (request.purpose === 'synthesize') return submit('done');
      return submit(`answer ${subtaskOf(request)}`);
    });
    const harness = harnessFor(backend, await tempDir(), { maxParallelSubtasks: 3 });
    const events = collect(harness);
    await harness.run('Four independent things.');
    expect(events.filter((e) => e.type === 'subtask-start').map((e) => e.index)).toEqual([0, 1, 2, 3]);
    expect(Math.max(...runningOver(events).map((r) => r.length))).toBe(3);
  });

  it("gives each subtask the checkpoints of the subtasks finished when it started, never a running one's", async () => {
    // B holds its first reply until C has asked: C starts (after A) while B is still running.
    const cAsked = gate();
    const backend = new ScriptedBackend(async (request) => {
      if (request.purpose === 'plan') {
        return planWith(
          { title: 'A', dependsOn: [] },
          { title: 'B', dependsOn: [] },
          { title: 'C', dependsOn: [0] },
          {
            title: 'D',
            dependsOn: [1],
          },
        );
      }
      if (request.purpose === 'synthesize') return submit('done');
      const n = subtaskOf(request);
      if (n === 3) cAsked.open();
      if (n === 2) await cAsked.promise;
      return submit(`ANSWER-${n}`);
    });
    const harness = harnessFor(backend, await tempDir(), { maxParallelSubtasks: 2 });
    const result = await harness.run('Do it.');
    expect(result.status).toBe('succeeded');
    const taskFor = (n: number) => taskOf(backend.calls.find((c) => c.purpose === 'execute' && subtaskOf(c) === n)!);
    expect(taskFor(1)).not.toContain('State so far');
    expect(taskFor(2)).not.toContain('State so far');
    // C: its dependency A, not B, which was running when C started.
    expect(taskFor(3)).toContain('ANSWER-1');
    expect(taskFor(3)).not.toContain('ANSWER-2');
    expect(taskFor(3)).toContain('Running at the same time in other loops: subtask 2.');
    // D: its dependency B, and A and C, which had finished when D started.
    expect(taskFor(4)).toContain('ANSWER-2');
    expect(taskFor(4)).toContain('ANSWER-1');
  });

  it('runs the dependent of a failed subtask, which sees the failure', async () => {
    const backend = new ScriptedBackend(async (request) => {
      if (request.purpose === 'plan') return planWith({ title: 'A', dependsOn: [] }, { title: 'B', dependsOn: [0] });
      if (request.purpose === 'synthesize') return submit('partial');
      if (subtaskOf(request) === 1) throw new Error('A cannot be done');
      return submit('B done');
    });
    const harness = harnessFor(backend, await tempDir(), { maxParallelSubtasks: 2, subtaskAttempts: 1 });
    const result = await harness.run('A then B.');
    expect(result.subtasks.map((s) => s.status)).toEqual(['failed', 'completed']);
    const task = taskOf(backend.calls.find((c) => c.purpose === 'execute' && subtaskOf(c) === 2)!);
    expect(task).toContain('subtask-1: A (FAILED)');
    expect(task).toContain('A cannot be done');
  });

  it('reports a file two subtasks running at the same time both wrote, keeping the later write', async () => {
    // B writes only after A wrote: the file ends up with B's version.
    const aWrote = gate();
    const backend = new ScriptedBackend(async (request) => {
      if (request.purpose === 'plan') return planWith({ title: 'A', dependsOn: [] }, { title: 'B', dependsOn: [] });
      if (request.purpose === 'synthesize') return submit('merged', ['shared.md']);
      const n = subtaskOf(request);
      const steps = request.messages.filter((m) => m.role === 'tool').length;
      if (steps > 0) {
        if (n === 1) aWrote.open();
        return submit(`wrote ${n}`, ['shared.md']);
      }
      if (n === 2) await aWrote.promise;
      return toolCall('write_file', { path: 'shared.md', content: `version ${n}` });
    });
    const dir = await tempDir();
    const harness = harnessFor(backend, dir, { maxParallelSubtasks: 2 });
    const events = collect(harness);
    const result = await harness.run('Write shared.md twice.');

    const conflict = { path: 'shared.md', writers: ['subtask-1', 'subtask-2'] };
    expect(await readFile(path.join(dir, 'shared.md'), 'utf8')).toBe('version 2');
    expect(result.report.writeConflicts).toEqual([conflict]);
    expect(result.report.warnings['write-conflict']).toBe(1);
    expect(result.subtasks[1]?.writeConflicts).toEqual([conflict]);
    expect(events.find((e) => e.type === 'run-warning')).toMatchObject({
      code: 'write-conflict',
      scope: 'subtask-2',
      message: expect.stringContaining("shared.md; the file holds subtask-2's version"),
    });
    const synthesis = taskOf(backend.calls.find((c) => c.purpose === 'synthesize')!);
    expect(synthesis).toMatch(/shared\.md.*: written by subtask-1, then subtask-2; it holds subtask-2's version\./);
  });

  it('reports no conflict for a file a dependent rewrites after its dependency', async () => {
    const backend = new ScriptedBackend(async (request) => {
      if (request.purpose === 'plan') return planWith({ title: 'A', dependsOn: [] }, { title: 'B', dependsOn: [0] });
      if (request.purpose === 'synthesize') return submit('merged', ['shared.md']);
      const n = subtaskOf(request);
      if (request.messages.some((m) => m.role === 'tool')) return submit(`wrote ${n}`, ['shared.md']);
      return toolCall('write_file', { path: 'shared.md', content: `version ${n}` });
    });
    const result = await harnessFor(backend, await tempDir(), { maxParallelSubtasks: 2 }).run('A, then B edits.');
    expect(result.report.writeConflicts).toEqual([]);
    expect(result.report.warnings['write-conflict']).toBeUndefined();
  });

  it('with maxParallelSubtasks 1 and no dependsOn, runs, prompts and reports exactly as the sequential stage did', async () => {
    const golden = JSON.parse(await readFile(path.join(import.meta.dirname, 'fixtures/sequential-trace.json'), 'utf8'));
    expect(await sequentialTrace({ maxParallelSubtasks: 1 })).toEqual(golden);
  });

  it('by default runs subtasks the planner marked independent one at a time in plan order, as the paper does', async () => {
    const backend = new ScriptedBackend(async (request) => {
      if (request.purpose === 'plan') return planWith({ title: 'A', dependsOn: [] }, { title: 'B', dependsOn: [] });
      if (request.purpose === 'synthesize') return submit('done');
      return submit(`ANSWER-${subtaskOf(request)}`);
    });
    const harness = harnessFor(backend, await tempDir());
    const events = collect(harness);
    await harness.run('A and B.');
    expect(Math.max(...runningOver(events).map((r) => r.length))).toBe(1);
    // Finished before B started, A's checkpoint is B's prior state, as in the paper: had the planner been wrong that
    // B needs nothing of A, B still has A's result.
    const b = taskOf(backend.calls.find((c) => c.purpose === 'execute' && subtaskOf(c) === 2)!);
    expect(b).toContain('ANSWER-1');
    expect(b).not.toContain('Running at the same time');
  });

  it('makes a subtask with an invalid dependsOn wait for every earlier one, and says so', async () => {
    const backend = new ScriptedBackend(async (request) => {
      if (request.purpose === 'plan') {
        return planWith({ title: 'A', dependsOn: [] }, { title: 'B', dependsOn: [] }, { title: 'C', dependsOn: [7] });
      }
      if (request.purpose === 'synthesize') return submit('done');
      return submit(`ANSWER-${subtaskOf(request)}`);
    });
    const harness = harnessFor(backend, await tempDir(), { maxParallelSubtasks: 3 });
    const events = collect(harness);
    await harness.run('A, B, then C.');
    const plan = events.find((e) => e.type === 'plan-created');
    expect(plan).toMatchObject({ reason: expect.stringContaining('subtask 2 listed [7] in dependsOn') });
    expect(plan?.type === 'plan-created' && plan.plan[2]).not.toHaveProperty('dependsOn');
    const order = events.flatMap((e) =>
      e.type === 'subtask-start' ? [`start ${e.index}`] : e.type === 'subtask-finish' ? [`finish ${e.record.id}`] : [],
    );
    expect(order.indexOf('start 2')).toBeGreaterThan(order.indexOf('finish subtask-1'));
    expect(order.indexOf('start 2')).toBeGreaterThan(order.indexOf('finish subtask-2'));
  });

  it('stops every running subtask when one fails for a cause no retry can cure, and skips the rest', async () => {
    const bAsked = gate();
    const backend = new ScriptedBackend(async (request) => {
      if (request.purpose === 'plan') {
        return planWith({ title: 'A', dependsOn: [] }, { title: 'B', dependsOn: [] }, { title: 'C', dependsOn: [0] });
      }
      if (subtaskOf(request) === 1) {
        // A fails only once B is waiting on the model, so that B is cut off.
        await bAsked.promise;
        throw new HarnessError('authentication', 'bad key');
      }
      bAsked.open();
      return new Promise<GenerateResult>((_resolve, reject) => {
        request.signal?.addEventListener('abort', () => reject(request.signal?.reason), { once: true });
      });
    });
    const result = await harnessFor(backend, await tempDir(), { maxParallelSubtasks: 2 }).run('A, B, then C.');
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('authentication');
    expect(result.subtasks.map((s) => s.status)).toEqual(['failed', 'failed', 'skipped']);
  });

  it('rejects a maxParallelSubtasks below 1', () => {
    expect(() => createHarness({ backend: new ScriptedBackend([]), limits: { maxParallelSubtasks: 0 } })).toThrow(
      /limits\.maxParallelSubtasks/,
    );
  });

  it('resumes a run stopped with two subtask loops in flight, each from its own saved loop', async () => {
    // The model: a function of the request. Each of A and B looks up, writes its note and submits; C reads both.
    // In the first run, A and B wait for each other after their lookups, so that a snapshot holds both loops.
    const barrier = { waiting: new Set<number>(), open: gate(), on: true };
    const model = async (request: GenerateRequest): Promise<GenerateResult> => {
      // A turn of the event loop, as a real model call takes: the saves a loop does not wait for are handed over at
      // the end of their turn, so without it a loop's state after its lookup collapses into the next one's.
      await new Promise((resolve) => setImmediate(resolve));
      if (request.purpose === 'plan') {
        return planWith(
          { title: 'A', dependsOn: [] },
          { title: 'B', dependsOn: [] },
          { title: 'C', dependsOn: [0, 1] },
        );
      }
      if (request.purpose === 'synthesize') return submit('final', ['notes/s1.md', 'notes/s2.md']);
      const n = subtaskOf(request);
      const steps = request.messages.filter((m) => m.role === 'tool').length;
      if (n === 3) return submit(`C saw: ${/ANSWER-1/.test(taskOf(request))} ${/ANSWER-2/.test(taskOf(request))}`);
      if (steps === 0) return toolCall('lookup', { key: `fact-${n}` }, `lookup-${n}`);
      if (steps === 1) {
        if (barrier.on) {
          barrier.waiting.add(n);
          if (barrier.waiting.size === 2) barrier.open.open();
          await barrier.open.promise;
        }
        return toolCall('write_note', { path: `notes/s${n}.md`, text: `note ${n}` }, `write-${n}`);
      }
      return submit(`ANSWER-${n}`, [`notes/s${n}.md`]);
    };
    const dir = await tempDir();
    const store = new MemoryRunStore();
    // The store keeps what a crash leaves right after the first snapshot with both loops past their lookups.
    store.freezeWhen = (snapshot: RunSnapshot) =>
      snapshot.loops?.length === 2 && snapshot.loops.every((loop) => loop.dialogue.some((m) => m.role === 'tool'));
    const options = (backend: ScriptedBackend) =>
      createHarness({
        backend,
        tools: scenarioTools(0),
        workspace: dir,
        verification: false,
        store,
        limits: { maxParallelSubtasks: 2 },
      });
    const stopped = await options(new ScriptedBackend(model)).run({ task: 'A and B, then C.', runId: 'r1' });
    expect(stopped.error?.code).toBe('store-failed');
    const saved = store.get('r1') as RunSnapshot;
    expect(saved.loops?.map((loop) => loop.scope).sort()).toEqual(['subtask-1', 'subtask-2']);

    store.failSavesWith = undefined;
    store.freezeWhen = undefined;
    barrier.on = false;
    const backend = new ScriptedBackend(model);
    const harness = options(backend);
    const events = collect(harness);
    const result = await harness.resume('r1');

    expect(result.status).toBe('succeeded');
    expect(events[0]).toMatchObject({ type: 'run-resume', stage: 'execute', redo: { modelCalls: 2 } });
    expect(events[0]?.type === 'run-resume' && [...(events[0].scopes ?? [])].sort()).toEqual([
      'subtask-1',
      'subtask-2',
    ]);
    // Each loop went on from its own saved state: neither looked its fact up again, and neither started over.
    const calls = events.flatMap((e) => (e.type === 'tool-call' ? [`${e.scope} ${e.toolName}`] : []));
    expect(calls.filter((c) => c.endsWith('lookup'))).toEqual([]);
    expect(events.filter((e) => e.type === 'subtask-start').map((e) => e.index)).toEqual([2]);
    expect(result.subtasks.map((s) => s.status)).toEqual(['completed', 'completed', 'completed']);
    expect(result.subtasks[2]?.answer).toBe('C saw: true true');
    expect(await readFile(path.join(dir, 'notes/s1.md'), 'utf8')).toBe('note 1');
    expect(await readFile(path.join(dir, 'notes/s2.md'), 'utf8')).toBe('note 2');
    expect(store.get('r1')?.status).toBe('finished');
  });
});
