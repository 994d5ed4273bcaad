/**
 * Prompt injection through every channel that carries untrusted text into a prompt. Each published AgentDojo and BIPIA
 * string is planted behind the closing markers an attacker would try (old `>>>` and `</tool-output>` ends, lookalikes,
 * and the run's own boundary in exact and lookalike forms); a ScriptedBackend records every request, and each request
 * must keep every injected string inside a block of the run's boundary, with the boundary never inside a block.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { GenerateRequest, GenerateResult, Message } from '../../src/backend/types.js';
import { Executor } from '../../src/executor/executor.js';
import { createHarness } from '../../src/harness/harness.js';
import { functionAgent } from '../../src/modes/managed/index.js';
import { MemoryManager } from '../../src/memory/memory-manager.js';
import { toCheckpoint, renderCheckpoints } from '../../src/handoff/checkpoints.js';
import type { SubtaskRecord } from '../../src/contracts/work.js';
import { Planner } from '../../src/planner/planner.js';
import { DataMark } from '../../src/prompts/datamark.js';
import { Repairer } from '../../src/repairer/repairer.js';
import { Synthesizer } from '../../src/synthesizer/synthesizer.js';
import { planOf, reply, submit, toolCalls, verdict } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { Verifier } from '../../src/verifier/verifier.js';
import { LocalWorkspace } from '../../src/workspace/local-workspace.js';
import { tempDir, writeFile as writeFileTool } from '../harness/helpers.js';
import { decide, managedRun, verdictOf } from '../managed/helpers.js';
import { boundaryOf, breakouts, canariesSent, hostile, hostileName, INJECTIONS } from './injection-support.js';

const N = INJECTIONS.length;
const ALL = Array.from({ length: N }, (_, n) => n);
const MARK = new DataMark('5ca1ab1e0ddba11a');

const echo = defineTool({
  name: 'echo',
  description: 'Returns its text.',
  input: z.object({ text: z.string() }),
  readOnly: true,
  execute: ({ text }) => text,
});

function batches(size: number): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < N; i += size) out.push(ALL.slice(i, i + size));
  return out;
}

function expectNoBreakouts(requests: readonly GenerateRequest[], id: string): void {
  expect(requests.length).toBeGreaterThan(0);
  expect(requests.flatMap((request) => breakouts(request, id))).toEqual([]);
}

async function workspace(): Promise<LocalWorkspace> {
  return LocalWorkspace.create({ dir: await tempDir() });
}

/** Objective text of an executor request (its second message). */
const objectiveOf = (request: GenerateRequest) => String(request.messages[1]?.content);
const turnsOf = (request: GenerateRequest) => request.messages.filter((m) => m.role === 'assistant').length;

it('uses the published attack strings', () => {
  expect(N).toBeGreaterThan(500);
});

describe('the whole pipeline through createHarness, with an attacker who learns the run boundary', () => {
  /** A run whose model plants injections (with the boundary it read from its own system prompt) in every channel. */
  async function hostileRun(first: number) {
    const ws = await workspace();
    const name = (id: string) => hostileName(first + 2, id);
    const backend = new ScriptedBackend((request): GenerateResult => {
      const id = boundaryOf(request);
      const at = (k: number) => hostile(first + k, id);
      switch (request.purpose) {
        case 'plan':
          return planOf('Collect', 'Write');
        case 'execute':
          if (objectiveOf(request).includes('Subtask 2 of 2')) return submit(at(5), ['report.md']);
          if (turnsOf(request) === 0) {
            return toolCalls([
              { name: 'echo', args: { text: at(0) } },
              { name: 'write_file', args: { path: 'report.md', content: at(1) } },
              { name: 'write_file', args: { path: name(id), content: at(3) } },
            ]);
          }
          return submit(at(4), ['report.md', name(id)]);
        case 'synthesize':
          return submit(at(6), ['report.md', name(id)]);
        case 'verify':
          // The first verification fails, so that the deliverable goes to repair; the call is recorded already.
          return backend.callsFor('verify').length > 1
            ? verdict(true)
            : verdict(false, [{ description: 'Give report.md a heading.', artifact: 'report.md' }]);
        case 'repair':
          return submit(at(7), ['report.md']);
        default:
          return reply('unused');
      }
    });
    const harness = createHarness({ backend, tools: [echo, writeFileTool], workspace: ws });
    const result = await harness.run('Write report.md about rivers.');
    return { backend, result };
  }

  it('keeps every injection inside a block of the run boundary, in every request of the run', async () => {
    const { backend, result } = await hostileRun(0);
    expect(result.status).toBe('succeeded');
    const id = boundaryOf(backend.calls[0]!);
    // One boundary for the whole run: every role's system prompt names it.
    for (const request of backend.calls) expect(boundaryOf(request)).toBe(id);
    expect(new Set(backend.calls.map((c) => c.purpose))).toEqual(
      new Set(['plan', 'execute', 'synthesize', 'verify', 'repair']),
    );
    expectNoBreakouts(backend.calls, id);
    // The strings did reach the model: tool output, file content and name, answers to the next subtask, synthesis,
    // verification and repair.
    expect(canariesSent(backend.calls, [0, 1, 2, 3, 4, 5, 6, 7])).toBe(8);
    const verify = backend.callsFor('verify')[0]!;
    expect(canariesSent([verify], [1, 2, 6])).toBe(3);
    expect(canariesSent(backend.callsFor('synthesize'), [4, 5])).toBe(2);
    expect(canariesSent(backend.callsFor('repair'), [6])).toBe(1);
    expect(
      canariesSent(
        backend.callsFor('execute').filter((r) => objectiveOf(r).includes('Subtask 2 of 2')),
        [4],
      ),
    ).toBe(1);
  });

  it('gives two runs different boundaries', async () => {
    const [a, b] = await Promise.all([hostileRun(10), hostileRun(20)]);
    expect(boundaryOf(a.backend.calls[0]!)).not.toBe(boundaryOf(b.backend.calls[0]!));
  });
});

describe('every published string through every channel', () => {
  it('tool output', async () => {
    const backend = new ScriptedBackend(
      {
        execute: [
          toolCalls(ALL.map((n) => ({ name: 'echo', args: { text: hostile(n, MARK.id) }, id: `c${n}` }))),
          submit('done'),
        ],
      },
      { contextWindow: 2_000_000 },
    );
    const executor = new Executor({ backend, tools: new ToolRegistry([echo]) });
    const ws = await workspace();
    await executor.run({
      runId: 'r',
      purpose: 'execute',
      scope: 's',
      request: 'Read.',
      objective: 'Read.',
      workspace: ws,
      dataMark: MARK,
    });
    expectNoBreakouts(backend.calls, MARK.id);
    expect(canariesSent(backend.calls, ALL)).toBe(N);
  });

  it('file previews, file names and answers in the verify request', async () => {
    const ws = await workspace();
    let sent = 0;
    for (const batch of batches(40)) {
      const files: string[] = [];
      for (const n of batch) {
        const file = n % 2 ? `file-${n}.md` : hostileName(n, MARK.id);
        await ws.writeFile(file, hostile(n, MARK.id), { tool: 'test' });
        files.push(file);
      }
      const backend = new ScriptedBackend({ verify: [verdict(true)] }, { contextWindow: 2_000_000 });
      await new Verifier({ backend }).verify({
        request: 'Check the files.',
        deliverable: { answer: hostile(batch[0]!, MARK.id), files },
        subtaskAnswers: batch.map((n) => ({
          title: 't',
          status: 'completed',
          answer: hostile(n, MARK.id),
          files: [files[0]!],
        })),
        workspace: ws,
        dataMark: MARK,
      });
      expectNoBreakouts(backend.calls, MARK.id);
      sent += canariesSent(backend.calls, batch);
    }
    expect(sent).toBe(N);
  });

  const records = (batch: number[]): SubtaskRecord[] =>
    batch.map((n) => ({
      id: `subtask-${n}`,
      title: `Part ${n}`,
      objective: 'o',
      expectedOutput: 'e',
      status: n % 5 ? 'completed' : 'failed',
      attempts: 1,
      answer: hostile(n, MARK.id),
      files: [hostileName(n, MARK.id)],
      ...(n % 5 ? {} : { error: hostile(n, MARK.id) }),
    }));

  it('a subtask answer passed to the next subtask', async () => {
    let sent = 0;
    for (const batch of batches(100)) {
      const backend = new ScriptedBackend({ execute: [submit('ok')] }, { contextWindow: 2_000_000 });
      await new Executor({ backend, tools: new ToolRegistry() }).run({
        runId: 'r',
        purpose: 'execute',
        scope: 's',
        request: 'Next.',
        objective: 'Next.',
        priorState: renderCheckpoints(
          records(batch).map((r) => toCheckpoint(r)),
          MARK,
          new Map(records(batch).map((r) => [r.id, r.error ?? ''])),
        ),
        workspace: await workspace(),
        dataMark: MARK,
      });
      expectNoBreakouts(backend.calls, MARK.id);
      sent += canariesSent(backend.calls, batch);
    }
    expect(sent).toBe(N);
  });

  it('subtask answers passed to synthesis', async () => {
    let sent = 0;
    for (const batch of batches(100)) {
      const backend = new ScriptedBackend({ synthesize: [submit('ok')] }, { contextWindow: 2_000_000 });
      const executor = new Executor({ backend, tools: new ToolRegistry() });
      await new Synthesizer({ executor }).synthesize({
        runId: 'r',
        request: 'Combine.',
        subtasks: records(batch),
        attachments: [hostileName(batch[0]!, MARK.id)],
        workspace: await workspace(),
        dataMark: MARK,
      });
      expectNoBreakouts(backend.calls, MARK.id);
      sent += canariesSent(backend.calls, batch);
    }
    expect(sent).toBe(N);
  });

  it('the deliverable passed to repair', async () => {
    const ws = await workspace();
    let sent = 0;
    for (const n of ALL) {
      const backend = new ScriptedBackend({ repair: [submit('fixed')] });
      await new Repairer({ executor: new Executor({ backend, tools: new ToolRegistry() }) }).repair({
        runId: 'r',
        request: 'Fix.',
        deliverable: { answer: hostile(n, MARK.id), files: [hostileName(n, MARK.id)] },
        defects: [{ description: 'Add a heading.', artifact: hostileName(n, MARK.id) }],
        attempt: 1,
        workspace: ws,
        dataMark: MARK,
      });
      expectNoBreakouts(backend.calls, MARK.id);
      sent += canariesSent(backend.calls, [n]);
    }
    expect(sent).toBe(N);
  });

  it('attachment names and previews in the plan request', async () => {
    const ws = await workspace();
    let sent = 0;
    for (const batch of batches(40)) {
      const attachments: string[] = [];
      for (const n of batch) {
        const file = `attachments/${hostileName(n, MARK.id)}`;
        await ws.writeFile(file, hostile(n, MARK.id), { tool: 'intake' });
        attachments.push(file);
      }
      const backend = new ScriptedBackend({ plan: [planOf('a')] }, { contextWindow: 2_000_000 });
      await new Planner({ backend }).plan({ request: 'Plan.', attachments, workspace: ws, dataMark: MARK });
      expectNoBreakouts(backend.calls, MARK.id);
      sent += canariesSent(backend.calls, batch);
    }
    expect(sent).toBe(N);
  });

  it('a history summary written from injected tool output', async () => {
    const memory = new MemoryManager();
    const ws = await workspace();
    const summarizer = new ScriptedBackend((_request, index) => reply(hostile(index, MARK.id)));
    const dialogue: Message[] = [
      { role: 'system', content: MARK.withRule('sys') },
      { role: 'user', content: 'task' },
      ...Array.from({ length: 8 }, (_, i): Message[] => [
        { role: 'assistant', content: '', toolCalls: [{ id: `c${i}`, name: 'echo', arguments: '{}' }] },
        {
          role: 'tool',
          toolCallId: `c${i}`,
          toolName: 'echo',
          content: MARK.block(`${hostile(i, MARK.id)}\n${'o '.repeat(2_000)}`),
        },
      ]).flat(),
    ];
    const backend = new ScriptedBackend([], { contextWindow: 8_000 });
    const fitted: GenerateRequest[] = [];
    for (const n of ALL) {
      const messages = await memory.fitRequest(
        { messages: dialogue, tools: [], protectedCount: 2 },
        {
          runId: 'r',
          purpose: 'execute',
          scope: `s${n}`,
          backend,
          summarizer,
          workspace: ws,
          signal: new AbortController().signal,
          emit: () => {},
          dataMark: MARK,
        },
      );
      fitted.push({ purpose: 'execute', messages });
    }
    expectNoBreakouts(fitted, MARK.id);
    expectNoBreakouts(summarizer.calls, MARK.id);
    expect(canariesSent(fitted, ALL)).toBe(N);
  });

  it('managed mode: evidence, the executor claim and an external agent output', async () => {
    const records = ALL.map((n) => ({ id: `r${n}`, description: `Record ${n}` }));
    let manageCalls = 0;
    const backend = new ScriptedBackend(
      {
        manage: [
          decide('execute', {
            records,
            contract: { task: 'Do it.', acceptanceCriteria: ['all'], recordIds: records.map((r) => r.id) },
          }),
          decide('blocked', { reason: 'stop here' }),
        ],
        audit: [
          verdictOf(
            'complete',
            'clean',
            ALL.map((n) => ({
              recordId: `r${n}`,
              check: `check ${n}`,
              observed: hostile(n, MARK.id),
              verdict: 'pass' as const,
            })),
          ),
        ],
      },
      { contextWindow: 4_000_000 },
    );
    const run = await managedRun({
      backend,
      options: {
        agents: {
          executor: functionAgent(async () => ({
            status: 'done',
            output: ALL.map((n) => hostile(n, MARK.id)).join('\n'),
          })),
        },
      },
    });
    run.init.dataMark = MARK;
    run.init.limits.maxIterations = 10_000;
    await run.run();
    manageCalls = backend.callsFor('manage').length;
    expect(manageCalls).toBe(2);
    expectNoBreakouts(backend.calls, MARK.id);
    // The manager's second request shows the audited evidence; the auditor saw the agent's claim.
    expect(canariesSent(backend.callsFor('manage').slice(1), ALL)).toBe(N);
    expect(canariesSent(backend.callsFor('audit'), [0, N - 1])).toBe(2);
  });
});
