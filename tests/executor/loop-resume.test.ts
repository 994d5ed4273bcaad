import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { GenerateRequest, GenerateResult, Message, ToolCall } from '../../src/backend/types.js';
import type { LoopCheckpoint } from '../../src/durability/types.js';
import { HarnessError } from '../../src/errors.js';
import type { EventInput } from '../../src/events.js';
import { Executor } from '../../src/executor/executor.js';
import type { ExecutorResult, ExecutorRunInput } from '../../src/contracts/executor.js';
import { DataMark } from '../../src/prompts/datamark.js';
import { CONTINUE_AFTER_LENGTH, NUDGE_AFTER_EMPTY } from '../../src/prompts/executor.js';
import { PassThroughMemory } from '../../src/testing/pass-through-memory.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { ToolContext } from '../../src/tools/types.js';
import { stubWorkspace } from './stub-workspace.js';

const MARK = new DataMark('0123456789abcdef');
type ToolMessage = Extract<Message, { role: 'tool' }>;

/** A registry that records the id of every call it runs. */
class CountingRegistry extends ToolRegistry {
  readonly invoked: string[] = [];
  override invoke(call: ToolCall, context: ToolContext, options?: Parameters<ToolRegistry['invoke']>[2]) {
    this.invoked.push(call.id);
    return super.invoke(call, context, options);
  }
}

/**
 * Lets `turns` turns of the event loop pass, as a model or tool at work does: a save the loop does not wait for is
 * handed over at the end of its turn, so checkpoints made in one turn collapse (see `CheckpointSaver.save`).
 */
async function turns(count: number): Promise<void> {
  for (let turn = 0; turn < count; turn++) await new Promise((resolve) => setImmediate(resolve));
}

/** Notes on an in-memory disk: `read_note` is read-only (and takes longer), `write_note` is not. */
function noteTools(disk: Map<string, string>): CountingRegistry {
  const read = defineTool({
    name: 'read_note',
    description: 'Reads a note.',
    input: z.object({ path: z.string() }),
    readOnly: true,
    execute: async ({ path }) => {
      await turns(3);
      return disk.get(path) ?? `(no note at ${path})`;
    },
  });
  const write = defineTool({
    name: 'write_note',
    description: 'Writes a note.',
    input: z.object({ path: z.string(), text: z.string() }),
    execute: async ({ path, text }) => {
      await turns(1);
      disk.set(path, text);
      return { text: `wrote ${path}`, files: [path] };
    },
  });
  return new CountingRegistry([read, write]);
}

function assistant(content: string, calls: ToolCall[], finishReason: GenerateResult['finishReason']): GenerateResult {
  return {
    message: { role: 'assistant', content, toolCalls: calls },
    finishReason,
    usage: { inputTokens: 0, outputTokens: 0 },
  };
}

/**
 * A deterministic model: its reply is a function of the dialogue alone. It cuts its first reply at the output limit,
 * writes a.txt, sends one empty reply, reads a.txt while writing b.txt, reads b.txt and submits what it read; a call
 * that did not succeed (e.g. reported as interrupted) is made again.
 */
function notesModel(request: GenerateRequest): GenerateResult {
  const messages = request.messages;
  const turn = messages.filter((message) => message.role === 'assistant').length;
  const calls = new Map(
    messages
      .flatMap((message) => (message.role === 'assistant' ? (message.toolCalls ?? []) : []))
      .map((c) => [c.id, c]),
  );
  const succeeded = (name: string, path: string) =>
    messages.find((message): message is ToolMessage => {
      if (message.role !== 'tool' || message.isError) return false;
      const call = calls.get(message.toolCallId);
      return call?.name === name && JSON.parse(call.arguments).path === path;
    });
  const call = (name: string, args: { path?: string; [key: string]: unknown }): ToolCall => ({
    id: `${name}-${args.path}-${turn}`,
    name,
    arguments: JSON.stringify(args),
  });
  if (turn === 0) return assistant('Plan: write the notes, ', [], 'length');
  if (!succeeded('write_note', 'a.txt'))
    return assistant('then read them.', [call('write_note', { path: 'a.txt', text: 'alpha' })], 'tool-calls');
  if (!messages.some((message) => message.role === 'user' && message.content === NUDGE_AFTER_EMPTY))
    return assistant('', [], 'stop');
  const round = [
    ...(succeeded('read_note', 'a.txt') ? [] : [call('read_note', { path: 'a.txt' })]),
    ...(succeeded('write_note', 'b.txt') ? [] : [call('write_note', { path: 'b.txt', text: 'beta' })]),
  ];
  if (round.length > 0) return assistant('', round, 'tool-calls');
  const readB = succeeded('read_note', 'b.txt');
  if (!readB) return assistant('', [call('read_note', { path: 'b.txt' })], 'tool-calls');
  const answer = `notes: ${succeeded('read_note', 'a.txt')?.content} | ${readB.content}`;
  return assistant('', [call('submit_answer', { answer, files: ['a.txt', 'b.txt'] })], 'tool-calls');
}

interface Captured {
  checkpoint: LoopCheckpoint;
  disk: Map<string, string>;
  invocations: number;
}

function baseInput(overrides: Partial<ExecutorRunInput> = {}): ExecutorRunInput {
  return {
    runId: 'run-1',
    purpose: 'execute',
    scope: 'subtask-1',
    request: 'Keep two notes and report them.',
    objective: 'Write a.txt and b.txt, then report both.',
    workspace: stubWorkspace(),
    dataMark: MARK,
    ...overrides,
  };
}

/** One loop of the notes model on `disk`, its events, calls and the tools' record. */
async function runNotes(
  disk: Map<string, string>,
  overrides: Partial<ExecutorRunInput> = {},
  tools: CountingRegistry = noteTools(disk),
) {
  const backend = new ScriptedBackend(async (request) => {
    await turns(1);
    return notesModel(request);
  });
  const events: EventInput[] = [];
  const executor = new Executor({
    backend,
    tools,
    memory: new PassThroughMemory(),
    emit: (event) => events.push(event),
  });
  const result = await executor.run(baseInput(overrides));
  return { result, backend, tools, events };
}

/** The uninterrupted run, with every checkpoint it saved (JSON round-tripped, as a store keeps it). */
async function capturedRun(
  overrides: Partial<ExecutorRunInput> = {},
): Promise<{ result: ExecutorResult; disk: Map<string, string>; captured: Captured[] }> {
  const disk = new Map<string, string>();
  const captured: Captured[] = [];
  const tools = noteTools(disk);
  const { result } = await runNotes(
    disk,
    {
      ...overrides,
      onCheckpoint: async (checkpoint) => {
        const copy = JSON.parse(JSON.stringify(checkpoint));
        captured.push({ checkpoint: copy, disk: new Map(disk), invocations: tools.invoked.length });
      },
    },
    tools,
  );
  return { result, disk, captured };
}

/** Every tool call of every reply answered before the next reply: what a provider requires of a dialogue. */
function unansweredIn(messages: readonly Message[]): string[] {
  const open = new Set<string>();
  const missing: string[] = [];
  for (const message of messages) {
    if (message.role === 'assistant') {
      missing.push(...open);
      open.clear();
      for (const call of message.toolCalls ?? []) open.add(call.id);
    } else if (message.role === 'tool') open.delete(message.toolCallId);
  }
  return [...missing, ...open];
}

function toolMessageOf(dialogue: readonly Message[], callId: string): ToolMessage | undefined {
  return dialogue.find((message): message is ToolMessage => message.role === 'tool' && message.toolCallId === callId);
}

describe('Executor loop checkpoints', () => {
  it('saves after each reply, before its tools run, after each tool returns and once the observations are in', async () => {
    const { result, captured } = await capturedRun();
    expect(result.status).toBe('completed');
    const shapes = captured.map(({ checkpoint }) => ({
      iterations: checkpoint.iterations,
      last: checkpoint.dialogue.at(-1)?.role,
      journal: checkpoint.toolCalls.map((entry) => `${entry.toolName}:${entry.state}`).sort(),
    }));
    // The loop waits only for the saves before write_note runs (it is not read-only); the others go on behind it,
    // handed over at the end of the turn they were made in, and those made in one turn, or while one is being saved,
    // collapse into the newest (the last call of a round to return, and the round's observations, are one save). So
    // the saves arrive in order, each one of these points, and every point before a write_note call is among them.
    const points = [
      // The cut reply and its continuation request.
      { iterations: 1, last: 'user', journal: [] },
      // write a.txt: started, then finished with its observation in.
      { iterations: 2, last: 'assistant', journal: ['write_note:started'] },
      { iterations: 2, last: 'assistant', journal: ['write_note:finished'] },
      { iterations: 2, last: 'tool', journal: [] },
      // The empty reply and its nudge.
      { iterations: 3, last: 'user', journal: [] },
      // read a.txt and write b.txt in parallel: both started, the write finished first, observations in.
      { iterations: 4, last: 'assistant', journal: ['read_note:started', 'write_note:started'] },
      { iterations: 4, last: 'assistant', journal: ['read_note:started', 'write_note:finished'] },
      { iterations: 4, last: 'assistant', journal: ['read_note:finished', 'write_note:finished'] },
      { iterations: 4, last: 'tool', journal: [] },
      { iterations: 5, last: 'assistant', journal: ['read_note:started'] },
      { iterations: 5, last: 'assistant', journal: ['read_note:finished'] },
      { iterations: 5, last: 'tool', journal: [] },
      // The submit_answer reply: journaled with nothing to run, then the loop ends.
      { iterations: 6, last: 'assistant', journal: [] },
    ];
    let next = 0;
    for (const shape of shapes) {
      while (next < points.length && !matches(shape, points[next])) next += 1;
      expect(next, `save ${JSON.stringify(shape)} out of order or unexpected`).toBeLessThan(points.length);
      next += 1;
    }
    const journals = shapes.map((shape) => shape.journal.join(','));
    expect(journals).toContain('write_note:started');
    expect(journals).toContain('read_note:started,write_note:started');
    expect(journals).toContain('read_note:started,write_note:finished');
    const firstWrite = captured.find(({ checkpoint }) => checkpoint.toolCalls[0]?.toolName === 'write_note');
    expect(firstWrite?.checkpoint.toolCalls[0]).toMatchObject({ readOnly: false, state: 'started' });
    expect(firstWrite?.invocations).toBe(0);
    expect(captured.at(-1)?.checkpoint.iterations).toBe(6);
  });

  it("with durability 'sync', saves every checkpoint before going on", async () => {
    const { result, captured } = await capturedRun({ durability: 'sync' });
    expect(result.status).toBe('completed');
    const journals = captured
      .map(({ checkpoint }) => [
        checkpoint.iterations,
        checkpoint.toolCalls
          .map((entry) => `${entry.toolName}:${entry.state}`)
          .sort()
          .join(','),
      ])
      // The two parallel calls finish while each other's save is stored: the first may collapse into the second.
      .filter(
        ([, journal]) =>
          !/^read_note:(started|finished),write_note:(started|finished)$/.test(String(journal)) ||
          ['read_note:started,write_note:started', 'read_note:finished,write_note:finished'].includes(String(journal)),
      );
    expect(journals).toEqual([
      [1, ''],
      [2, 'write_note:started'],
      [2, 'write_note:finished'],
      [2, ''],
      [3, ''],
      [4, 'read_note:started,write_note:started'],
      [4, 'read_note:finished,write_note:finished'],
      [4, ''],
      [5, 'read_note:started'],
      [5, 'read_note:finished'],
      [5, ''],
      [6, ''],
    ]);
  });

  it('does not count a call a crash interrupted as an invalid call, however often it happens', async () => {
    const { captured } = await capturedRun({ durability: 'sync' });
    const { checkpoint, disk } = captured.find(({ checkpoint }) =>
      checkpoint.toolCalls.some((entry) => entry.toolName === 'write_note' && entry.state === 'started'),
    )!;
    const write = checkpoint.toolCalls.find((entry) => entry.toolName === 'write_note')!;
    // As if the same write had been interrupted by a crash twice already, and the limit were about to be reached.
    const streak = { key: `write_note\u0000${write.arguments}`, count: 2 };
    const { result } = await runNotes(new Map(disk), { resumeFrom: { ...checkpoint, invalid: streak } });
    expect(result.status).toBe('completed');
  });

  it('keeps the cut-off text and the invalid-reply count in its checkpoints', async () => {
    const handed: LoopCheckpoint[] = [];
    await runNotes(new Map(), {
      onCheckpoint: async (checkpoint) => {
        handed.push(checkpoint);
      },
    });
    expect(handed.some((c) => c.cutOff === 'Plan: write the notes, ' && c.purpose === 'execute')).toBe(true);
    expect(handed.some((c) => c.invalid.key === '' && c.invalid.count === 1)).toBe(true);
  });

  it('never changes a checkpoint once handed over, so a store may serialise it later', async () => {
    const handed: Array<{ checkpoint: LoopCheckpoint; json: string }> = [];
    await runNotes(new Map(), {
      onCheckpoint: async (checkpoint) => {
        handed.push({ checkpoint, json: JSON.stringify(checkpoint) });
      },
    });
    expect(handed.length).toBeGreaterThanOrEqual(10);
    for (const { checkpoint, json } of handed) expect(JSON.stringify(checkpoint)).toBe(json);
  });

  it('runs a read-only call without waiting for its save to be stored', async () => {
    const disk = new Map<string, string>();
    const tools = noteTools(disk);
    let heldSaves = 0;
    const { result } = await runNotes(
      disk,
      {
        onCheckpoint: async (checkpoint) => {
          const onlyReads = checkpoint.toolCalls.length > 0 && checkpoint.toolCalls.every((entry) => entry.readOnly);
          if (!onlyReads || checkpoint.iterations !== 5) return;
          heldSaves += 1;
          // Stored only once the read it journals has run: a loop that waited for this save would never get there.
          while (!tools.invoked.some((id) => id.startsWith('read_note-b.txt')))
            await new Promise((r) => setImmediate(r));
        },
      },
      tools,
    );
    expect(result.status).toBe('completed');
    expect(heldSaves).toBeGreaterThan(0);
  });

  it('never runs two saves at once, even while parallel tools finish', async () => {
    let active = 0;
    let most = 0;
    let saves = 0;
    const { result } = await runNotes(new Map(), {
      onCheckpoint: async () => {
        active += 1;
        saves += 1;
        most = Math.max(most, active);
        await new Promise((resolve) => setImmediate(resolve));
        active -= 1;
      },
    });
    expect(result.status).toBe('completed');
    // Thirteen checkpoints are made; those made while one was being saved collapsed into the newest.
    expect(saves).toBeGreaterThanOrEqual(5);
    expect(saves).toBeLessThanOrEqual(13);
    expect(most).toBe(1);
  });

  it('a loop resumed from any of its checkpoints ends like the uninterrupted one, redoing at most one call of each kind', async () => {
    const { result: whole, disk: wholeDisk, captured } = await capturedRun();
    const wholeInvocations = 6;
    expect(captured.length).toBeGreaterThanOrEqual(10);
    for (const [index, { checkpoint, disk, invocations }] of captured.entries()) {
      const resumedDisk = new Map(disk);
      const { result, backend, tools } = await runNotes(resumedDisk, { resumeFrom: checkpoint });
      const where = `resumed from checkpoint ${index}`;
      expect(result.status, where).toBe('completed');
      expect(result.answer, where).toBe(whole.answer);
      expect(result.files, where).toEqual(whole.files);
      expect(resumedDisk, where).toEqual(wholeDisk);
      expect(backend.calls.length, where).toBe(result.iterations - checkpoint.iterations);
      for (const call of backend.calls) expect(unansweredIn(call.messages), where).toEqual([]);
      expect(result.iterations, where).toBeLessThanOrEqual(whole.iterations + 1);
      expect(invocations + tools.invoked.length, where).toBeLessThanOrEqual(wholeInvocations + 1);
    }
    expect(whole.answer).toContain('alpha');
    expect(whole.answer).toContain('beta');
  });

  it('reports a started call of a non-read-only tool as interrupted instead of running it', async () => {
    const { captured } = await capturedRun();
    const { checkpoint, disk } = captured.find(({ checkpoint }) =>
      checkpoint.toolCalls.some((entry) => entry.toolName === 'write_note' && entry.state === 'started'),
    )!;
    const interrupted = checkpoint.toolCalls.find((entry) => entry.toolName === 'write_note')!;
    const { result, backend, tools, events } = await runNotes(new Map(disk), { resumeFrom: checkpoint });
    expect(result.status).toBe('completed');
    expect(tools.invoked).not.toContain(interrupted.callId);
    const observation = toolMessageOf(backend.calls[0]!.messages, interrupted.callId);
    expect(observation?.isError).toBe(true);
    expect(String(observation?.content)).toContain(
      'interrupted: the harness stopped while this call ran (crash or restart); its outcome is unknown — check the workspace before repeating it',
    );
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'tool-result', callId: interrupted.callId, isError: true }),
    );
    expect(events).not.toContainEqual(expect.objectContaining({ type: 'tool-call', callId: interrupted.callId }));
  });

  it('runs a started call of a read-only tool again', async () => {
    const { captured } = await capturedRun();
    const { checkpoint, disk } = captured.find(
      ({ checkpoint }) =>
        checkpoint.toolCalls.length === 1 &&
        checkpoint.toolCalls[0]?.readOnly &&
        checkpoint.toolCalls[0].state === 'started',
    )!;
    const started = checkpoint.toolCalls[0]!;
    const { result, backend, tools } = await runNotes(new Map(disk), { resumeFrom: checkpoint });
    expect(result.status).toBe('completed');
    expect(tools.invoked[0]).toBe(started.callId);
    const observation = toolMessageOf(backend.calls[0]!.messages, started.callId);
    expect(observation?.isError).toBeUndefined();
    expect(String(observation?.content)).toContain('beta');
  });

  it('keeps the saved result of a finished call instead of running it again', async () => {
    const { captured } = await capturedRun();
    const { checkpoint } = captured.find(({ checkpoint }) =>
      checkpoint.toolCalls.some((entry) => entry.toolName === 'write_note' && entry.state === 'finished'),
    )!;
    const finished = checkpoint.toolCalls.find((entry) => entry.toolName === 'write_note')!;
    // An empty disk: a re-run write would put the note back, a kept result does not.
    const disk = new Map<string, string>();
    const { backend, tools, events } = await runNotes(disk, {
      resumeFrom: checkpoint,
      maxIterations: checkpoint.iterations + 1,
    });
    expect(tools.invoked).not.toContain(finished.callId);
    expect(disk.has(JSON.parse(finished.arguments).path)).toBe(false);
    expect(String(toolMessageOf(backend.calls[0]!.messages, finished.callId)?.content)).toContain(
      finished.result!.text,
    );
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'tool-result', callId: finished.callId, files: finished.result!.files }),
    );
  });

  it('ends budget-exhausted without a model call when the restored iterations used the whole budget', async () => {
    const { captured } = await capturedRun();
    const { checkpoint, disk } = captured.find(({ checkpoint }) => checkpoint.dialogue.at(-1)?.role === 'user')!;
    const { result, backend } = await runNotes(new Map(disk), {
      resumeFrom: checkpoint,
      maxIterations: checkpoint.iterations,
    });
    expect(result).toMatchObject({
      status: 'failed',
      iterations: checkpoint.iterations,
      error: { code: 'budget-exhausted' },
    });
    expect(backend.calls).toHaveLength(0);
  });

  it('continues a cut reply from its checkpoint: the continuation joins the saved text', async () => {
    const { captured } = await capturedRun();
    const first = captured[0]!.checkpoint;
    expect(first.dialogue.at(-1)).toEqual({ role: 'user', content: CONTINUE_AFTER_LENGTH });
    const { result } = await runNotes(new Map(), { resumeFrom: first, maxIterations: 2 });
    // The second reply calls a tool and the budget ends there: the last text is the cut reply and its continuation.
    expect(result).toMatchObject({ status: 'failed', iterations: 2, error: { code: 'budget-exhausted' } });
    expect(result.answer).toBe('Plan: write the notes, then read them.');
  });

  it('refuses a damaged checkpoint, or one of another loop, before using any of it', async () => {
    const { captured } = await capturedRun();
    const { checkpoint } = captured[3]!;
    const damaged = { ...checkpoint, dialogue: [...checkpoint.dialogue, { role: 'tool', content: 'no call id' }] };
    for (const [resumeFrom, field] of [
      [damaged, 'resumeFrom.dialogue'],
      [{ ...checkpoint, iterations: -1 }, 'resumeFrom.iterations'],
      [{ ...checkpoint, scope: 'subtask-2' }, 'subtask-2'],
    ] as const) {
      const backend = new ScriptedBackend(async (request) => {
        await turns(1);
        return notesModel(request);
      });
      const executor = new Executor({ backend, tools: noteTools(new Map()), memory: new PassThroughMemory() });
      const error = await executor.run(baseInput({ resumeFrom: resumeFrom as LoopCheckpoint })).catch((e) => e);
      expect(error).toMatchObject({ code: 'invalid-input', message: expect.stringContaining(field) });
      expect(backend.calls).toHaveLength(0);
    }
  });

  it('marks new tool output with the saved boundary, and refuses another one', async () => {
    const { captured } = await capturedRun();
    const { checkpoint, disk } = captured.find(({ checkpoint }) => checkpoint.dialogue.at(-1)?.role === 'user')!;
    const { result, backend } = await runNotes(new Map(disk), { resumeFrom: checkpoint, dataMark: undefined });
    expect(result.status).toBe('completed');
    const fresh = backend.calls
      .at(-1)!
      .messages.filter((message) => message.role === 'tool')
      .at(-1);
    expect(String(fresh?.content)).toContain(`⟦data-${MARK.id}⟧`);
    const other = await runNotes(new Map(disk), { resumeFrom: checkpoint, dataMark: DataMark.random() }).catch(
      (error) => error,
    );
    expect(other).toMatchObject({ code: 'invalid-input', message: expect.stringContaining(MARK.id) });
  });

  it('ends failed with the error of a rejected save, and never saves again', async () => {
    for (const failAt of [1, 2, 3, 7]) {
      let calls = 0;
      const { result, tools } = await runNotes(new Map(), {
        onCheckpoint: async () => {
          calls += 1;
          if (calls === failAt) throw new HarnessError('store-failed', `disk full at save ${failAt}`);
        },
      });
      expect(result.status, `save ${failAt}`).toBe('failed');
      expect(result.error, `save ${failAt}`).toEqual({ code: 'store-failed', message: `disk full at save ${failAt}` });
      expect(calls, `save ${failAt}`).toBe(failAt);
      // A save that fails before a reply's tools run keeps them from running.
      if (failAt === 2) expect(tools.invoked).toEqual([]);
    }
  });

  it('runs no tool of a reply once the loop was stopped while its checkpoint was saved', async () => {
    const controller = new AbortController();
    const { result, tools } = await runNotes(new Map(), {
      signal: controller.signal,
      onCheckpoint: async (checkpoint) => {
        if (checkpoint.toolCalls.length > 0) controller.abort();
      },
    });
    expect(result).toMatchObject({ status: 'aborted', error: { code: 'aborted' } });
    expect(tools.invoked).toEqual([]);
  });

  it('ends aborted without waiting for a save that hangs', async () => {
    const controller = new AbortController();
    const { result } = await runNotes(new Map(), {
      signal: controller.signal,
      onCheckpoint: () => {
        controller.abort();
        return new Promise<void>(() => undefined);
      },
    });
    // The first save is handed over at the end of the first reply's turn, while the second model call starts.
    expect(result.status).toBe('aborted');
    expect(result.iterations).toBeLessThanOrEqual(2);
  });

  it('takes a rejection that is not a HarnessError as store-failed', async () => {
    const { result } = await runNotes(new Map(), {
      onCheckpoint: async () => {
        throw new Error('EACCES: permission denied');
      },
    });
    expect(result).toMatchObject({
      status: 'failed',
      error: { code: 'store-failed', message: 'EACCES: permission denied' },
    });
  });
});

function matches(shape: { iterations: number; last: string | undefined; journal: string[] }, point: unknown): boolean {
  const p = point as { iterations: number; last: string; journal: unknown };
  return (
    shape.iterations === p.iterations &&
    shape.last === p.last &&
    (Array.isArray(p.journal) ? shape.journal.join(',') === p.journal.join(',') : true)
  );
}
