import { appendFile, open, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileRunStore } from '../../src/durability/file-store.js';
import { SnapshotSeal } from '../../src/durability/snapshot-seal.js';
import type { RunSnapshot } from '../../src/durability/types.js';
import { HarnessError } from '../../src/errors.js';
import type { HarnessEvent } from '../../src/events.js';
import { collect, tempDir } from '../harness/helpers.js';
import { scenarioHarness, TASK } from './fixtures/scenario.js';
import { journalsStarted, TracedStore, type Write } from './traced-store.js';

const LATENCY = 1;

const runFile = (dir: string) => path.join(dir, '.harness', 'run.json');
const journalFile = (dir: string) => path.join(dir, '.harness', 'run.journal');

/** The scenario run on `store` (the default file store in `dir`, traced); `sideEffects`: writes made before each write_note. */
async function tracedRun(dir: string, store = new TracedStore(FileRunStore.inWorkspace(dir)), runId = 'r1') {
  const sideEffects: number[] = [];
  const harness = scenarioHarness(
    dir,
    LATENCY,
    { store },
    {
      onToolStart: (tool) => {
        if (tool === 'write_note') sideEffects.push(store.writes.length);
      },
    },
  );
  const result = await harness.run({ task: TASK, runId });
  await harness.close();
  return { store, sideEffects, result };
}

/**
 * A run stopped as by a crash right after the journal line that declares its second write_note call was stored:
 * the workspace holds what the crash left (`run.json` from before the subtask, the call in `run.journal`).
 */
async function crashedInSecondWrite(dir: string) {
  const store = new TracedStore(FileRunStore.inWorkspace(dir));
  let declared = 0;
  store.crashAfter = (write) => journalsStarted(write, 'write_note') && ++declared === 2;
  return tracedRun(dir, store);
}

/** A run stopped as by a crash right after the journal line that records its second write_note call's result. */
async function crashedAfterSecondWrite(dir: string, runId = 'r1') {
  const store = new TracedStore(FileRunStore.inWorkspace(dir));
  let declared = 0;
  store.crashAfter = (write) => {
    if (journalsStarted(write, 'write_note')) declared += 1;
    else if (declared === 2 && write.kind === 'append') return true;
    return false;
  };
  return tracedRun(dir, store, runId);
}

/** A resume of the run in `dir` with a fresh harness, and its events. */
async function resume(dir: string) {
  const harness = scenarioHarness(dir, LATENCY);
  const events: HarnessEvent[] = collect(harness);
  const outcome = await harness.resume('r1', { workspace: dir }).then(
    (result) => ({ result, error: undefined }),
    (error: unknown) => ({ result: undefined, error: error as HarnessError }),
  );
  await harness.close();
  return { ...outcome, events };
}

async function journalLines(dir: string): Promise<string[]> {
  return (await readFile(journalFile(dir), 'utf8')).split('\n').filter(Boolean);
}

describe('side effects journaled at the cost of one append (issue 21)', () => {
  it('declares every side-effecting call with one journal line, not a whole snapshot, on the default store', async () => {
    const dir = await tempDir();
    const { store, sideEffects, result } = await tracedRun(dir);
    expect(result.status).toBe('succeeded');
    expect(sideEffects).toHaveLength(5);
    for (const before of sideEffects) {
      // The write the side effect waited for: the one line that declares it, stored.
      const declared = store.writes[before - 1] as Write;
      expect(declared.kind).toBe('append');
      expect(declared.failed).toBe(false);
      expect(journalsStarted(declared, 'write_note')).toBe(true);
    }
    // Whole snapshots only at the start, where a loop ended (a stage boundary) and at the end: 1 + 5 loops + 1.
    expect(store.of('save').length).toBeLessThanOrEqual(7);
    expect(store.of('append').length).toBeGreaterThan(store.of('save').length);
    // The finished snapshot replaced the journal.
    expect(await readFile(journalFile(dir), 'utf8')).toBe('');
  });

  it('resumes from the snapshot and its journal after a crash: the declared call is reported interrupted, not re-run', async () => {
    const dir = await tempDir();
    const crashed = await crashedInSecondWrite(dir);
    expect(crashed.result.error?.code).toBe('store-failed');
    // The call is declared in the journal only: the snapshot file predates its loop.
    const snapshot = JSON.parse(await readFile(runFile(dir), 'utf8')) as RunSnapshot;
    expect(journalsStarted({ kind: 'save', snapshot, failed: false }, 'write_note')).toBe(false);
    expect((await journalLines(dir)).length).toBeGreaterThan(0);

    const { result, events } = await resume(dir);
    expect(result?.status).toBe('succeeded');
    expect(events[0]).toMatchObject({ type: 'run-resume', redo: { interruptedToolCalls: ['write_note'] } });
    expect(await readFile(path.join(dir, 'final.md'), 'utf8')).toBe('final v2: notes 1, 2, 3\n');
  });

  it('ignores a last line cut short by a crash in the middle of an append', async () => {
    const dir = await tempDir();
    await crashedInSecondWrite(dir);
    const last = (await journalLines(dir)).at(-1) as string;
    await appendFile(journalFile(dir), last.slice(0, Math.floor(last.length / 2)));
    const { result, events } = await resume(dir);
    expect(result?.status).toBe('succeeded');
    expect(events[0]).toMatchObject({ type: 'run-resume', redo: { interruptedToolCalls: ['write_note'] } });
  });

  it('ignores sealed lines of an earlier snapshot (a crash between a new snapshot and the journal reset)', async () => {
    const dir = await tempDir();
    // At the snapshot that ends the first loop, the journal it replaces comes back, and the process dies.
    class ResetLost extends TracedStore {
      override async save(runId: string, snapshot: RunSnapshot): Promise<void> {
        const compacts = !this.crashed && this.writes.some((write) => write.kind === 'append');
        const replaced = compacts ? await readFile(journalFile(dir), 'utf8') : undefined;
        await super.save(runId, snapshot);
        if (replaced === undefined) return;
        await writeFile(journalFile(dir), replaced);
        this.crash();
      }
    }
    const crashed = await tracedRun(dir, new ResetLost(FileRunStore.inWorkspace(dir)));
    expect(crashed.result.error?.code).toBe('store-failed');
    expect((await journalLines(dir)).length).toBeGreaterThan(0);

    const { result, events } = await resume(dir);
    expect(result?.status).toBe('succeeded');
    // The run goes on from the newer snapshot: the earlier loop's declared calls are over, none is interrupted.
    expect(events[0]).toMatchObject({ type: 'run-resume', redo: { interruptedToolCalls: [] } });
  });
});

/** Refusals of a journal changed by code that could write into the workspace. */
describe('a resume refuses a journal the harness did not write (issue 21)', () => {
  const tamperings: Array<[string, (lines: string[], other: string[]) => string[]]> = [
    [
      'a line changed (a write marked read-only, to be run again)',
      (lines) => lines.map((line) => line.replaceAll('"readOnly":false', '"readOnly":true')),
    ],
    [
      'a line without its seal',
      (lines) => [...lines.slice(0, -1), (lines.at(-1) as string).replace(/,"mac":"[0-9a-f]{64}"}$/, '}')],
    ],
    ["a genuine line of another run's journal", (lines, other) => [...lines, other[0] as string]],
    [
      'two lines swapped',
      (lines) => (lines.length < 2 ? lines : ([...lines.slice(0, -2), lines.at(-1), lines.at(-2)] as string[])),
    ],
    ['a line removed from the middle', (lines) => [...lines.slice(0, 1), ...lines.slice(2)]],
    ['a line repeated', (lines) => [...lines, lines.at(-1) as string]],
  ];

  it.each(tamperings)('%s: snapshot-tampered naming the journal; nothing runs', async (_label, tamper) => {
    const dir = await tempDir();
    await crashedAfterSecondWrite(dir);
    const otherDir = await tempDir();
    await crashedAfterSecondWrite(otherDir, 'other');
    const lines = await journalLines(dir);
    expect(lines.length).toBeGreaterThanOrEqual(3);
    await writeFile(journalFile(dir), `${tamper(lines, await journalLines(otherDir)).join('\n')}\n`);
    const { error, events } = await resume(dir);
    expect(HarnessError.isInstance(error) && error.code, error?.message).toBe('snapshot-tampered');
    expect(error?.message).toContain(journalFile(dir));
    expect(events).toEqual([]);
  });

  it.each([
    ['a complete line that is not JSON', (text: string) => `${text}{"journal":1,\n`, /not valid JSON/],
    [
      'a line that nests too deep',
      (text: string) => `${text}${'['.repeat(100_000)}${']'.repeat(100_000)}\n`,
      /deeper than 64/,
    ],
    ['a line with a __proto__ key', (text: string) => `${text}{"__proto__":{"polluted":true}}\n`, /"__proto__" key/],
  ] as const)('%s: snapshot-corrupt naming the journal; nothing runs', async (_label, change, reason) => {
    const dir = await tempDir();
    await crashedAfterSecondWrite(dir);
    await writeFile(journalFile(dir), change(await readFile(journalFile(dir), 'utf8')));
    const { error, events } = await resume(dir);
    expect(error?.code, error?.message).toBe('snapshot-corrupt');
    expect(error?.message).toContain(journalFile(dir));
    expect(error?.message).toMatch(reason);
    expect(events).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    [
      'a field this version does not write',
      (entry: Record<string, unknown>) => ({ ...entry, injected: 'x' }),
      /injected/,
    ],
    [
      'a loop keeping more messages than it has',
      (entry: Record<string, unknown>) => ({
        ...entry,
        loops: (entry.loops as Array<Record<string, unknown>>).map((loop) => ({ ...loop, keep: 999 })),
      }),
      /keeps 999 messages/,
    ],
  ] as const)('a line sealed with the run key but holding %s is snapshot-corrupt', async (_label, change, reason) => {
    const dir = await tempDir();
    await crashedAfterSecondWrite(dir);
    const seal = await SnapshotSeal.forRun({ runId: 'r1', option: undefined, store: FileRunStore.inWorkspace(dir) });
    const lines = await journalLines(dir);
    const { mac: _mac, ...last } = JSON.parse(lines.at(-1) as string) as Record<string, unknown>;
    await writeFile(journalFile(dir), `${[...lines.slice(0, -1), seal.sealLine(change(last))].join('\n')}\n`);
    const { error, events } = await resume(dir);
    expect(error?.code, error?.message).toBe('snapshot-corrupt');
    expect(error?.message).toMatch(reason);
    expect(events).toEqual([]);
  });

  it('a journal over the size limit is refused by its size, before it is read', async () => {
    const dir = await tempDir();
    await crashedAfterSecondWrite(dir);
    const handle = await open(journalFile(dir), 'r+');
    await handle.truncate(65 * 1024 * 1024);
    await handle.close();
    const { error } = await resume(dir);
    expect(error?.code).toBe('snapshot-corrupt');
    expect(error?.message).toContain(journalFile(dir));
    expect(error?.message).toContain(`over the limit of ${64 * 1024 * 1024} bytes`);
  });
});
