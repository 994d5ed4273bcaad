import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunSnapshot } from '../../src/durability/types.js';
import { HarnessError } from '../../src/errors.js';
import type { HarnessEvent } from '../../src/events.js';
import type { RunResult } from '../../src/contracts/work.js';
import { collect, tempDir } from '../harness/helpers.js';
import { scenarioHarness, TASK } from './fixtures/scenario.js';
import { MemoryRunStore } from './memory-store.js';
import { resealed } from './reseal.js';

const LATENCY = 2;

/** The deliverable as a user sees it: the answer and the content of every delivered file. */
async function delivered(result: RunResult): Promise<{ answer: string; files: Record<string, string> }> {
  const files: Record<string, string> = {};
  for (const file of [...result.deliverable.files].sort()) {
    files[file] = await readFile(path.join(result.workspace, file), 'utf8');
  }
  return { answer: result.deliverable.answer, files };
}

async function uninterrupted() {
  const dir = await tempDir();
  const store = new MemoryRunStore();
  const result = await scenarioHarness(dir, LATENCY, { store }).run({ task: TASK, runId: 'base' });
  return { result, deliverable: await delivered(result) };
}

/** Runs the scenario and aborts it right after the `nth` event matching `stop`; the store keeps its last snapshot. */
async function runAndStop(dir: string, store: MemoryRunStore, stop: (e: HarnessEvent) => boolean, nth = 1) {
  const harness = scenarioHarness(dir, LATENCY, { store });
  const controller = new AbortController();
  let seen = 0;
  harness.onAny((event) => {
    if (stop(event) && ++seen === nth) controller.abort();
  });
  const result = await harness.run({ task: TASK, runId: 'r1', signal: controller.signal });
  await harness.close();
  return result;
}

describe('harness.resume()', () => {
  it.each([
    ['during a model call of a subtask', (e: HarnessEvent) => e.type === 'llm-request' && e.purpose === 'execute', 2],
    ['during a write tool call', (e: HarnessEvent) => e.type === 'tool-call' && e.toolName === 'write_note', 2],
    ['during a read-only tool call', (e: HarnessEvent) => e.type === 'tool-call' && e.toolName === 'lookup', 3],
    ['between stages', (e: HarnessEvent) => e.type === 'subtask-finish', 3],
    ['during the repair', (e: HarnessEvent) => e.type === 'repair-start', 1],
  ] as const)('goes on from where a run stopped %s, to the same deliverable', async (_label, stop, nth) => {
    const base = await uninterrupted();
    const dir = await tempDir();
    const store = new MemoryRunStore();
    const stopped = await runAndStop(dir, store, stop, nth);
    expect(stopped.status).toBe('aborted');
    const saved = store.get('r1') as RunSnapshot;
    expect(saved.status).toBe('running');

    const harness = scenarioHarness(dir, LATENCY, { store });
    const events = collect(harness);
    const result = await harness.resume('r1');

    expect(result.status).toBe('succeeded');
    expect(await delivered(result)).toEqual(base.deliverable);
    expect(events[0]).toMatchObject({ type: 'run-resume', mode: 'pipeline', savedAt: saved.savedAt, resumed: true });
    expect(events.every((e) => e.resumed === true)).toBe(true);
    // Numbering goes on from the snapshot, one number per event.
    expect(events.map((e) => e.seq)).toEqual(events.map((_e, i) => saved.seq + 1 + i));
    expect(result.report.resumes.count).toBe(1);
    expect(result.verdicts.map((v) => v.passed)).toEqual([false, true]);
    expect(result.subtasks.map((s) => s.status)).toEqual(['completed', 'completed', 'completed']);
    expect(store.get('r1')?.status).toBe('finished');
  });

  it.each([
    ['reports an interrupted write to the model and in run-resume instead of running it again', 'write_note'],
    ['runs a read-only call again that was in flight', 'lookup'],
  ] as const)('%s', async (_label, toolName) => {
    const dir = await tempDir();
    const store = new MemoryRunStore();
    // The store keeps what a crash while the tool ran leaves: the call's start journaled, its end never.
    store.freezeWhen = (s) =>
      s.loops?.some((loop) => loop.toolCalls.some((c) => c.toolName === toolName && c.state === 'started')) ?? false;
    const stopped = await scenarioHarness(dir, LATENCY, { store }).run({ task: TASK, runId: 'r1' });
    expect(stopped.error?.code).toBe('store-failed');
    store.failSavesWith = undefined;
    store.freezeWhen = undefined;
    const harness = scenarioHarness(dir, LATENCY, { store });
    const events = collect(harness);
    const result = await harness.resume('r1');

    const resume = events.find((e) => e.type === 'run-resume');
    const calls = events.filter((e) => e.type === 'tool-call' && e.toolName === toolName);
    const first = events.find((e) => e.type === 'tool-result' && e.toolName === toolName);
    if (toolName === 'write_note') {
      expect(resume).toMatchObject({
        stage: 'execute',
        scopes: ['subtask-1'],
        redo: { interruptedToolCalls: [toolName] },
      });
      expect(first).toMatchObject({ isError: true });
      expect(result.report.resumes.interruptedToolCalls).toBe(1);
    } else {
      expect(resume).toMatchObject({ redo: { modelCalls: 0, rerunToolCalls: [toolName], interruptedToolCalls: [] } });
      expect(first).toMatchObject({ isError: false });
      expect(result.report.resumes.rerunToolCalls).toBe(1);
    }
    expect(calls.length).toBeGreaterThan(0);
    expect(result.status).toBe('succeeded');
    expect(await delivered(result)).toEqual((await uninterrupted()).deliverable);
  });

  it('returns the saved result of a finished run without calling the model', async () => {
    const dir = await tempDir();
    const store = new MemoryRunStore();
    const first = await scenarioHarness(dir, LATENCY, { store }).run({ task: TASK, runId: 'done' });
    const harness = scenarioHarness(dir, LATENCY, { store });
    const events = collect(harness);
    const again = await harness.resume('done');
    expect(again).toEqual(JSON.parse(JSON.stringify(first)));
    expect(events).toEqual([]);
  });

  it('refuses a snapshot made under other options, naming each difference, and applies nothing', async () => {
    const dir = await tempDir();
    const store = new MemoryRunStore();
    await runAndStop(dir, store, (e) => e.type === 'plan-created');
    const before = store.snapshots.get('r1');
    const harness = scenarioHarness(dir, LATENCY, { store, limits: { maxIterations: 77 }, verification: false });
    const events = collect(harness);
    const error = await harness.resume('r1').catch((e: unknown) => e);
    expect(HarnessError.isInstance(error) && error.code).toBe('resume-incompatible');
    expect((error as Error).message).toContain('limits.maxIterations: snapshot 200, now 77');
    expect((error as Error).message).toContain('verification: snapshot true, now false');
    expect(store.snapshots.get('r1')).toBe(before);
    expect(events).toEqual([]);
  });

  it('refuses a snapshot of another library version', async () => {
    const dir = await tempDir();
    const store = new MemoryRunStore();
    await runAndStop(dir, store, (e) => e.type === 'plan-created');
    const saved = store.get('r1') as RunSnapshot;
    store.snapshots.set('r1', JSON.stringify(await resealed(store, { ...saved, library: '0.0.1' })));
    const error = await scenarioHarness(dir, LATENCY, { store })
      .resume('r1')
      .catch((e: unknown) => e);
    expect((error as HarnessError).code).toBe('resume-incompatible');
    expect((error as Error).message).toContain('library: snapshot "0.0.1", now "0.1.0"');
  });

  it('says where it looked when there is no snapshot', async () => {
    const dir = await tempDir();
    const store = new MemoryRunStore();
    const missing = await scenarioHarness(dir, LATENCY, { store })
      .resume('nope')
      .catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: 'run-not-found' });
    expect((missing as Error).message).toContain("the harness's store");

    const none = await scenarioHarness(dir, LATENCY, { store: false })
      .resume('nope')
      .catch((e: unknown) => e);
    expect(none).toMatchObject({ code: 'run-not-found' });
    expect((none as Error).message).toContain('store: false');
  });

  it('ends the run failed with store-failed when a save fails, keeping the last good snapshot', async () => {
    const dir = await tempDir();
    const store = new MemoryRunStore();
    const harness = scenarioHarness(dir, LATENCY, { store });
    let good: string | undefined;
    harness.on('subtask-finish', (event) => {
      if (event.record.id === 'subtask-2') {
        good = store.snapshots.get('r1');
        store.failSavesWith = new Error('ENOSPC: no space left on device');
      }
    });
    const result = await harness.run({ task: TASK, runId: 'r1' });
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('store-failed');
    expect(result.error?.message).toContain('ENOSPC');
    expect(result.deliverable.files).toEqual(expect.arrayContaining(['notes/s1.md']));
    expect(store.snapshots.get('r1')).toBe(good);

    store.failSavesWith = undefined;
    const resumed = await scenarioHarness(dir, LATENCY, { store }).resume('r1');
    expect(resumed.status).toBe('succeeded');
    expect(resumed.subtasks.map((s) => s.status)).toEqual(['completed', 'completed', 'completed']);
  });

  it('saves nothing with store: false', async () => {
    const dir = await tempDir();
    const result = await scenarioHarness(dir, LATENCY, { store: false }).run({ task: TASK, runId: 'r1' });
    expect(result.status).toBe('succeeded');
    await expect(readFile(path.join(dir, '.harness', 'run.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('uses the store passed to run() and to resume()', async () => {
    const dir = await tempDir();
    const store = new MemoryRunStore();
    const harness = scenarioHarness(dir, LATENCY, { store: false });
    const controller = new AbortController();
    harness.on('plan-created', () => controller.abort());
    await harness.run({ task: TASK, runId: 'r1', signal: controller.signal, store });
    expect(store.get('r1')?.status).toBe('running');
    const result = await scenarioHarness(dir, LATENCY, { store: false }).resume('r1', { store });
    expect(result.status).toBe('succeeded');
  });

  it('names the missing workspace directory and that workers need the same shared path', async () => {
    const dir = await tempDir();
    const store = new MemoryRunStore();
    await runAndStop(dir, store, (e) => e.type === 'plan-created');
    const saved = store.get('r1') as RunSnapshot;
    store.snapshots.set('r1', JSON.stringify(await resealed(store, { ...saved, workspace: path.join(dir, 'gone') })));
    const harness = scenarioHarness(path.join(dir, 'elsewhere'), LATENCY, { store });
    const error = await harness.resume('r1', { workspace: path.join(dir, 'gone') }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'invalid-input' });
    expect((error as Error).message).toContain(path.join(dir, 'gone'));
    expect((error as Error).message).toContain('same path on every machine');
  });

  it('can resume a resumed run again', async () => {
    const base = await uninterrupted();
    const dir = await tempDir();
    const store = new MemoryRunStore();
    await runAndStop(dir, store, (e) => e.type === 'subtask-finish');
    const second = scenarioHarness(dir, LATENCY, { store });
    const controller = new AbortController();
    second.on('synthesis-finish', () => controller.abort());
    expect((await second.resume('r1', { signal: controller.signal })).status).toBe('aborted');
    const result = await scenarioHarness(dir, LATENCY, { store }).resume('r1');
    expect(result.report.resumes.count).toBe(2);
    expect(await delivered(result)).toEqual(base.deliverable);
  });
});
