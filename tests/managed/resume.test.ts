import { cp, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GenerateRequest, GenerateResult, Message, Purpose } from '../../src/backend/types.js';
import type { LoopCheckpoint, RunCheckpointer, RunSnapshot } from '../../src/durability/types.js';
import { HarnessError } from '../../src/errors.js';
import type { EventOf } from '../../src/events.js';
import { newReportTally, reportFromTally, tallyEvent, type ReportTally } from '../../src/modes/shared/report.js';
import { functionAgent, type ManagedRunResult, type ManagedSnapshotState } from '../../src/modes/managed/index.js';
import { DataMark } from '../../src/prompts/datamark.js';
import { reply, ScriptedBackend, submit, toolCall, verdict } from '../../src/testing/index.js';
import { LocalWorkspace } from '../../src/workspace/local-workspace.js';
import { decide, managedRun, tempDir, verdictOf } from './helpers.js';

const MARK = '0123456789abcdef';
const TASK = 'Write a.txt and b.txt for the river the user names.';
const PURPOSES: Purpose[] = ['manage', 'execute', 'audit', 'verify'];
const RECORDS = [
  { id: 'a', description: 'a.txt holds the river.' },
  { id: 'b', description: 'b.txt holds the river.' },
];

function text(message: Message | undefined): string {
  const content = message?.content ?? '';
  return typeof content === 'string' ? content : content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

/** The record a contract, a claim or an audit task is about, read from the request's first user message. */
function recordOf(request: GenerateRequest): 'a' | 'b' {
  const first = text(request.messages.find((m) => m.role === 'user'));
  return /works on:\n- b:|each record of the round: b/.test(first) ? 'b' : 'a';
}

/**
 * A deterministic model: every reply is a function of the request alone, so a resumed run is asked exactly what the
 * uninterrupted run was asked at the same point, and answers the same.
 */
function deterministic(request: GenerateRequest): GenerateResult {
  const all = request.messages.map(text).join('\n');
  const last = request.messages.at(-1);
  switch (request.purpose) {
    case 'manage':
      if (!all.includes('Nile')) return decide('ask', { records: RECORDS, question: 'Which river?' });
      for (const id of ['a', 'b'] as const) {
        if (!all.includes(`[completed] ${id}:`)) {
          return decide('execute', {
            contract: { task: `Write ${id}.txt.`, acceptanceCriteria: [`${id}.txt holds Nile`], recordIds: [id] },
          });
        }
      }
      return decide('done');
    case 'execute': {
      const id = recordOf(request);
      // A write the harness reports as interrupted (a stop while it ran) is checked by doing it again.
      if (last?.role === 'tool' && text(last).includes('interrupted')) {
        return toolCall('write_file', { path: `${id}.txt`, content: 'Nile\n' }, `write-${id}-again`);
      }
      if (last?.role === 'tool') return submit(`I wrote ${id}.txt.`, [`${id}.txt`]);
      return toolCall('write_file', { path: `${id}.txt`, content: 'Nile\n' }, `write-${id}`);
    }
    case 'audit': {
      const id = recordOf(request);
      if (last?.role !== 'tool') return toolCall('read_file', { path: `${id}.txt` }, `read-${id}`);
      const observed = text(last).includes('Nile') ? 'holds Nile' : 'missing';
      return verdictOf('complete', 'clean', [
        { recordId: id, check: `${id}.txt holds Nile`, observed, verdict: observed === 'missing' ? 'fail' : 'pass' },
      ]);
    }
    case 'verify':
      return verdict(true);
    default:
      return reply('unexpected purpose');
  }
}

/** One saved snapshot, the workspace as it was when it was saved, and the model calls made until then. */
interface Saved {
  snapshot: RunSnapshot;
  workspaceCopy: string;
  callsBefore: Record<Purpose, number>;
}

/**
 * A checkpointer that keeps every snapshot in memory as JSON and copies the workspace at each save: resuming from a
 * copy is what a crash right after that save leaves.
 */
function memoryCheckpointer(runId: string, root: () => string, backend: ScriptedBackend, copies = true) {
  const saved: Saved[] = [];
  let finished: unknown;
  const checkpointer: RunCheckpointer = {
    async save({ state, used, loops }) {
      const snapshot: RunSnapshot = JSON.parse(
        JSON.stringify({
          format: 1,
          library: 'test',
          runId,
          mode: 'managed',
          fingerprint: { hash: 'h', fields: {} },
          savedAt: saved.length,
          seq: 0,
          status: 'running',
          input: { task: TASK, attachments: [] },
          workspace: root(),
          dataMark: MARK,
          used,
          state,
          ...(loops ? { loops } : {}),
        }),
      );
      const workspaceCopy = copies ? await tempDir() : '';
      if (copies) await cp(root(), workspaceCopy, { recursive: true });
      const callsBefore = Object.fromEntries(PURPOSES.map((p) => [p, backend.callsFor(p).length])) as Record<
        Purpose,
        number
      >;
      saved.push({ snapshot, workspaceCopy, callsBefore });
    },
    async finish(result) {
      finished = JSON.parse(JSON.stringify(result));
    },
    // Every save above is done when it resolves: nothing is ever left in flight.
    idle: async () => undefined,
  };
  return { checkpointer, saved, finished: () => finished };
}

/** A managed run on the deterministic model, with an onAsk that counts its questions. */
async function deterministicRun(setup: { workspaceDir?: string; resume?: RunSnapshot; signal?: AbortSignal } = {}) {
  const backend = new ScriptedBackend((request) => deterministic(request));
  const asked: string[] = [];
  const run = await managedRun({
    backend,
    task: TASK,
    ...(setup.signal ? { signal: setup.signal } : {}),
    options: {
      onAsk: (question) => {
        asked.push(question);
        return 'Nile';
      },
    },
  });
  if (setup.workspaceDir) run.init.workspace = await LocalWorkspace.create({ dir: setup.workspaceDir });
  const store = memoryCheckpointer(run.init.runId, () => run.init.workspace.root, backend, !setup.resume);
  run.init.checkpointer = store.checkpointer;
  // The mark the snapshots name (a real checkpointer records the run's): a resumed run restores it from them.
  if (!setup.resume) run.init.dataMark = new DataMark(MARK);
  if (setup.resume) {
    run.init.resume = setup.resume;
    // As the harness does: the pipeline's report tally goes on from the one saved.
    const tally = structuredClone(stateOf(setup.resume).tallies?.base ?? newReportTally()) as ReportTally;
    run.init.baseReport = {
      tally,
      add: (event) => tallyEvent(tally, event),
      report: (wallTimeMs, verdicts) => reportFromTally(tally, { wallTimeMs, subtasks: [], verdicts }),
    };
  }
  return { run, backend, asked, store };
}

/** What must come out the same however often the run was interrupted. */
async function outcome(result: ManagedRunResult) {
  const files: Record<string, string> = {};
  for (const file of result.deliverable.files) files[file] = await readFile(path.join(result.workspace, file), 'utf8');
  return { status: result.status, taskState: result.taskState, answer: result.deliverable.answer, files };
}

function stateOf(snapshot: RunSnapshot): ManagedSnapshotState {
  return snapshot.state as ManagedSnapshotState;
}

describe('managed run: snapshots and resume', () => {
  it('resumed from any of its snapshots, ends as the uninterrupted run did, asking nothing twice', async () => {
    const first = await deterministicRun();
    const uninterrupted = await first.run.run();
    expect(uninterrupted.status).toBe('succeeded');
    const expected = await outcome(uninterrupted);
    const totals = Object.fromEntries(PURPOSES.map((p) => [p, first.backend.callsFor(p).length])) as Record<
      Purpose,
      number
    >;
    const saved = first.store.saved;
    // A snapshot before every stage and inside every executor loop.
    const stages = saved.map((s) => `${stateOf(s.snapshot).position.stage}${s.snapshot.loops ? '+loop' : ''}`);
    expect(new Set(stages)).toEqual(new Set(['manage', 'ask', 'execute', 'execute+loop', 'audit', 'verify', 'end']));
    expect(first.store.finished()).toMatchObject({ status: 'succeeded' });
    // The finished run's report came from the folds: the same counts as its events.
    expect(uninterrupted.report.modelCalls).toBe(first.backend.calls.length);
    expect(uninterrupted.report.managed).toMatchObject({ rounds: 4, decisions: { ask: 1, execute: 2, done: 1 } });

    for (const [index, { snapshot, workspaceCopy, callsBefore }] of saved.entries()) {
      const resumed = await deterministicRun({ workspaceDir: workspaceCopy, resume: snapshot });
      const result = await resumed.run.run();
      const where = `resumed from snapshot ${index} (${stages[index]})`;
      expect(await outcome(result), where).toEqual(expected);
      // Each call was made once: before the stop or after the resume, never both (the stop came right after a save),
      // except that a write journaled as started is not run again but reported, and the model then repeats it.
      const interrupted = (snapshot.loops?.[0]?.toolCalls ?? []).filter((c) => c.state === 'started' && !c.readOnly);
      const [resume] = resumed.run.events('run-resume');
      expect(resume?.redo.interruptedToolCalls, where).toEqual(interrupted.map((c) => c.toolName));
      for (const purpose of PURPOSES) {
        const redone = purpose === 'execute' ? interrupted.length : 0;
        expect(callsBefore[purpose] + resumed.backend.callsFor(purpose).length, `${where}: ${purpose}`).toBe(
          totals[purpose] + redone,
        );
      }
      // The question was put to onAsk once in all.
      const askedBefore = stateOf(snapshot).answers.length;
      expect(askedBefore + resumed.asked.length, where).toBe(1);
      // The report goes on from the saved tallies and counts the resume.
      expect(result.report.modelCalls, where).toBe(
        totals.manage + totals.execute + totals.audit + totals.verify + interrupted.length,
      );
      expect(result.report.managed.rounds, where).toBe(4);
      expect(result.report.resumes).toEqual({
        count: 1,
        redoneModelCalls: resume?.redo.modelCalls,
        rerunToolCalls: 0,
        interruptedToolCalls: interrupted.length,
      });
      expect(resume, where).toMatchObject({
        mode: 'managed',
        stage: stateOf(snapshot).position.stage,
        savedAt: snapshot.savedAt,
      });
      expect(resume?.scopes, where).toEqual(snapshot.loops?.map((loop) => loop.scope));
      expect(resumed.run.events('run-start'), where).toEqual([]);
    }
  }, 60_000);

  it('re-runs an audit cut off by a stop from its start, and applies it only once', async () => {
    const controller = new AbortController();
    const first = await deterministicRun({ signal: controller.signal });
    // Stop the run while the first audit's first model call is in flight.
    first.run.bus.on('llm-request', (event) => {
      if (event.purpose === 'audit') controller.abort();
    });
    const stopped = await first.run.run();
    expect(stopped.status).toBe('aborted');
    // An aborted run stays resumable: its last snapshot is not marked finished, and it is the audit's.
    expect(first.store.finished()).toBeUndefined();
    const last = first.store.saved.at(-1) as Saved;
    expect(stateOf(last.snapshot).position).toMatchObject({ stage: 'audit', round: 2 });
    // The cut-off audit changed nothing.
    expect(stopped.taskState.records.map((r) => r.status)).toEqual(['pending', 'pending']);
    expect(first.run.events('audit-finish')).toEqual([]);

    const resumed = await deterministicRun({ workspaceDir: first.run.init.workspace.root, resume: last.snapshot });
    const result = await resumed.run.run();
    expect(result.status).toBe('succeeded');
    expect(result.taskState.records.map((r) => r.status)).toEqual(['completed', 'completed']);
    const [resume] = resumed.run.events('run-resume');
    expect(resume).toMatchObject({
      stage: 'audit',
      redo: { modelCalls: 1, rerunToolCalls: [], interruptedToolCalls: [] },
    });
    // The audit of round 2 ran again from its first call; the executor of round 2 was not run again.
    const audits = resumed.backend.callsFor('audit');
    expect(audits[0]?.messages.filter((m) => m.role === 'tool')).toEqual([]);
    expect(resumed.run.events('audit-finish').map((e) => e.round)).toEqual([2, 3]);
    expect(resumed.backend.callsFor('execute').filter((r) => recordOf(r) === 'a')).toEqual([]);
    // Each audit counts once for record a: the evidence of round 2 is there once.
    const a = result.taskState.records.find((r) => r.id === 'a');
    expect(a?.evidence.filter((e) => e.round === 2)).toHaveLength(1);
  }, 30_000);

  it('goes on with an executor loop from its checkpoint: the tool call made before the stop is not made again', async () => {
    const first = await deterministicRun();
    await first.run.run();
    // The save just after write_file returned in round 2: its result is in the journal.
    const afterTool = first.store.saved.find((s) =>
      s.snapshot.loops?.[0]?.toolCalls.some((c: LoopCheckpoint['toolCalls'][number]) => c.state === 'finished'),
    ) as Saved;
    expect(afterTool.snapshot.loops?.[0]?.scope).toBe('execute-2');
    const resumed = await deterministicRun({ workspaceDir: afterTool.workspaceCopy, resume: afterTool.snapshot });
    const toolCalls: Array<EventOf<'tool-call'>> = [];
    resumed.run.bus.on('tool-call', (event) => toolCalls.push(event));
    const result = await resumed.run.run();
    expect(result.status).toBe('succeeded');
    // Only the loop's next reply (submit_answer) is new in round 2.
    expect(toolCalls.filter((c) => c.scope === 'execute-2').map((c) => c.toolName)).toEqual(['submit_answer']);
    expect(resumed.backend.callsFor('execute').filter((r) => recordOf(r) === 'a')).toHaveLength(1);
    expect(resumed.run.events('run-resume')[0]).toMatchObject({
      stage: 'execute',
      scopes: ['execute-2'],
      redo: { modelCalls: 0, rerunToolCalls: [], interruptedToolCalls: [] },
    });
  }, 30_000);

  it('never starts an external episode twice: one in flight at the stop is audited as interrupted', async () => {
    const episodes: string[] = [];
    const backend = new ScriptedBackend({
      manage: [
        decide('execute', {
          records: [RECORDS[0] as (typeof RECORDS)[number]],
          contract: { task: 'Write a.txt.', acceptanceCriteria: ['a.txt holds Nile'], recordIds: ['a'] },
        }),
      ],
      audit: [
        toolCall('read_file', { path: 'a.txt' }),
        verdictOf('incomplete', 'clean', [
          { recordId: 'a', check: 'a.txt holds Nile', observed: 'missing', verdict: 'fail' },
        ]),
      ],
    });
    const run = await managedRun({
      backend,
      task: TASK,
      options: {
        maxRounds: 1,
        agents: {
          executor: functionAgent(async ({ prompt }) => {
            episodes.push(prompt);
            return { status: 'done', output: 'done' };
          }),
        },
      },
    });
    const store = memoryCheckpointer(run.init.runId, () => run.init.workspace.root, backend, false);
    run.init.checkpointer = store.checkpointer;
    await run.run();
    const started = store.saved.find((s) => {
      const position = stateOf(s.snapshot).position;
      return position.stage === 'execute' && position.episodeStarted;
    }) as Saved;
    expect(started).toBeDefined();
    expect(episodes).toHaveLength(1);

    const again = await managedRun({
      backend: new ScriptedBackend({
        audit: [
          toolCall('read_file', { path: 'a.txt' }),
          verdictOf('incomplete', 'clean', [
            { recordId: 'a', check: 'a.txt holds Nile', observed: 'missing', verdict: 'fail' },
          ]),
        ],
      }),
      task: TASK,
      options: run.init.options,
    });
    again.init.resume = started.snapshot;
    const result = await again.run();
    expect(episodes).toHaveLength(1);
    expect(again.events('run-resume')[0]).toMatchObject({
      stage: 'execute',
      redo: { interruptedToolCalls: ['function'] },
    });
    expect(result.taskState.records[0]).toMatchObject({ id: 'a', status: 'pending' });
    const audit = again.events('audit-finish')[0];
    expect(audit?.round).toBe(1);
  }, 30_000);

  it.each([
    ['a stage save', 2],
    ['a save inside an executor loop', 5],
  ])(
    'ends failed with store-failed when %s fails, keeping the last good snapshot to go on from',
    async (_label, failAt) => {
      const first = await deterministicRun();
      const save = first.store.checkpointer.save.bind(first.store.checkpointer);
      let saves = 0;
      first.run.init.checkpointer = {
        save: async (progress) => {
          if (++saves === failAt) throw new HarnessError('store-failed', 'Could not save: disk full.');
          await save(progress);
        },
        finish: first.store.checkpointer.finish,
        idle: first.store.checkpointer.idle,
      };
      const failed = await first.run.run();
      expect(failed.status).toBe('failed');
      expect(failed.error).toMatchObject({ code: 'store-failed', message: expect.stringContaining('disk full') });
      // Nothing after the failed save was saved, and the run was not marked finished.
      expect(first.store.saved).toHaveLength(failAt - 1);
      expect(first.store.finished()).toBeUndefined();
      const last = first.store.saved.at(-1) as Saved;
      const resumed = await deterministicRun({ workspaceDir: first.run.init.workspace.root, resume: last.snapshot });
      const result = await resumed.run.run();
      expect(result.status).toBe('succeeded');
      expect(result.taskState.records.map((r) => r.status)).toEqual(['completed', 'completed']);
    },
    30_000,
  );

  it('refuses a snapshot that is not a managed run state, applying nothing', async () => {
    const first = await deterministicRun();
    await first.run.run();
    const [start] = first.store.saved;
    const { run, backend } = await deterministicRun({ resume: { ...(start as Saved).snapshot, state: { plan: [] } } });
    await expect(run.run()).rejects.toMatchObject({ code: 'resume-incompatible' });
    expect(backend.calls).toEqual([]);
  });
});
