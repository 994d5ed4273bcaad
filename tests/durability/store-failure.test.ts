import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileRunStore } from '../../src/durability/file-store.js';
import type { RunSnapshot, RunStore } from '../../src/durability/types.js';
import type { RunResult } from '../../src/contracts/work.js';
import type { HarnessEvent } from '../../src/events.js';
import { collect, tempDir } from '../harness/helpers.js';
import { scenarioHarness, TASK } from './fixtures/scenario.js';
import { MemoryJournalStore } from './memory-store.js';
import { journalsStarted, TracedStore, type Write } from './traced-store.js';

/** What a run did, in order: each write the store was asked for (and whether it failed), each side effect started. */
type Step = Write | { kind: 'side-effect' };

/** Wraps a store so that every write is logged in `steps`, failing ones too; its journal, if any, is passed on. */
function logged(store: RunStore, steps: Step[]): RunStore {
  const traced = new TracedStore(store);
  const wrapper: RunStore = {
    save: async (runId, snapshot) => {
      try {
        await traced.save(runId, snapshot);
      } finally {
        steps.push(traced.writes.at(-1) as Write);
      }
    },
    load: (runId) => store.load(runId),
    list: () => store.list(),
    delete: (runId) => store.delete(runId),
  };
  if (!store.appendJournal) return wrapper;
  return {
    ...wrapper,
    appendJournal: async (runId, lines) => {
      try {
        await traced.appendJournal(runId, lines);
      } finally {
        steps.push(traced.writes.at(-1) as Write);
      }
    },
    loadJournal: (runId) => traced.loadJournal(runId),
  };
}

/**
 * A store that fails its `k`-th write (a save, or a journal append when `journal`) and, when `persistent` (a full
 * disk), every later one (a one-off EIO otherwise).
 */
class FailingAt extends MemoryJournalStore {
  #writes = 0;
  constructor(
    private readonly k: number,
    private readonly persistent: boolean,
    readonly journal: boolean,
  ) {
    super();
    // Without a journal, the store is one of the stores that only save whole snapshots.
    if (!journal) Object.assign(this, { appendJournal: undefined, loadJournal: undefined });
  }
  #fails(): boolean {
    this.#writes += 1;
    return this.#writes === this.k || (this.persistent && this.#writes > this.k);
  }
  #error(): Error {
    return new Error(this.persistent ? 'ENOSPC: no space left on device' : 'EIO: i/o error, write');
  }
  override async save(runId: string, snapshot: RunSnapshot): Promise<void> {
    if (this.#fails()) throw this.#error();
    return super.save(runId, snapshot);
  }
  override async appendJournal(runId: string, lines: readonly string[]): Promise<void> {
    if (this.#fails()) throw this.#error();
    return super.appendJournal(runId, lines);
  }
}

/** Runs the scenario (3 subtasks, synthesis, a repair: 5 calls of a tool that writes) on `store`, logging its steps. */
async function runLogged(store: RunStore, durability: 'sync' | 'async') {
  const steps: Step[] = [];
  const harness = scenarioHarness(
    await tempDir(),
    0,
    { store: logged(store, steps), durability },
    {
      onToolStart: (tool) => {
        if (tool === 'write_note') steps.push({ kind: 'side-effect' });
      },
    },
  );
  const events = collect(harness);
  const result = await harness.run({ task: TASK, runId: 'r1' });
  return { steps, events, result };
}

/**
 * The property: a side effect starts only right after a stored save that journals it as started, and none starts
 * once a save has failed. A run whose store failed ends `failed` with `store-failed`, unless the failure came after
 * its last step (a save behind the run, or its finished snapshot): then its result stands and a warning says that
 * its snapshot could not be saved.
 */
function expectNoSideEffectAfterAFailedSave(run: { steps: Step[]; events: HarnessEvent[]; result: RunResult }) {
  const { steps, result, events } = run;
  let failed = false;
  let lastStored: Write | undefined;
  for (const step of steps) {
    if (step.kind !== 'side-effect') {
      if (step.failed) failed = true;
      else lastStored = step;
      continue;
    }
    expect(failed, 'a side effect started after a failed save').toBe(false);
    expect(lastStored && journalsStarted(lastStored, 'write_note'), 'a side effect started unjournaled').toBe(true);
  }
  if (!failed) return;
  if (result.error?.code === 'store-failed') {
    expect(result.status).toBe('failed');
  } else {
    expect(result.status).toBe('succeeded');
    expect(events).toContainEqual(expect.objectContaining({ type: 'run-warning', code: 'snapshot-save-failed' }));
  }
}

describe('a store that fails at step k (issue 21)', () => {
  for (const journal of [false, true]) {
    for (const durability of ['async', 'sync'] as const) {
      const kind = journal ? 'journal appends and snapshots' : 'whole snapshots';
      it(`never runs a side effect after a failed write, for every k (${kind}, durability ${durability})`, async () => {
        const clean = await runLogged(new FailingAt(0, false, journal), durability);
        expect(clean.result.status).toBe('succeeded');
        expect(clean.steps.filter((step) => step.kind === 'side-effect')).toHaveLength(5);
        expectNoSideEffectAfterAFailedSave(clean);
        const writes = clean.steps.filter((step) => step.kind !== 'side-effect');
        expect(writes.length).toBeGreaterThan(10);
        // With a journal, the side effects are declared by appends, and whole snapshots are few.
        if (journal) expect(writes.filter((w) => w.kind === 'save').length).toBeLessThan(writes.length / 2);
        let failures = 0;
        for (let k = 1; k <= writes.length; k += 1) {
          for (const persistent of [true, false]) {
            const run = await runLogged(new FailingAt(k, persistent, journal), durability);
            expectNoSideEffectAfterAFailedSave(run);
            if (run.steps.some((step) => step.kind !== 'side-effect' && step.failed)) failures += 1;
          }
        }
        // Nearly every k met a write to fail (writes behind the run collapse: a run may make fewer than the clean one).
        expect(failures).toBeGreaterThan(writes.length);
      }, 120_000);
    }
  }
});

/** Mounts a tmpfs of `size` bytes at `dir`; false where mounting is not permitted (not root, no CAP_SYS_ADMIN). */
function mountTmpfs(dir: string, size: number): boolean {
  return spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]).status === 0;
}

describe('a file store on a full tmpfs (issue 21)', () => {
  const SIZE = 1024 * 1024;
  let base = '';
  let mountPoint = '';
  let mounted = false;

  beforeAll(async () => {
    base = await mkdtemp(path.join(os.tmpdir(), 'full-tmpfs-'));
    mountPoint = path.join(base, 'full');
    await mkdir(mountPoint);
    mounted = process.platform === 'linux' && mountTmpfs(mountPoint, SIZE);
  });

  afterAll(async () => {
    if (mounted) spawnSync('umount', [mountPoint]);
    await rm(base, { recursive: true, force: true });
  });

  it('ends the run with store-failed (ENOSPC) at the save that fills it, never running a side effect after it', async (context) => {
    if (!mounted) context.skip();
    const outcomes: string[] = [];
    const failedKinds = new Set<string>();
    // Leave ever more room, so that the disk fills up at different steps of the run.
    for (let free = 4; free <= 124; free += 8) {
      const dir = path.join(mountPoint, `runs-${free}`);
      await mkdir(dir);
      await writeFile(path.join(mountPoint, 'filler'), Buffer.alloc(SIZE - free * 1024));
      const run = await runLogged(new FileRunStore({ dir }), 'async');
      expectNoSideEffectAfterAFailedSave(run);
      outcomes.push(run.result.error ? `${run.result.status}:${run.result.error.code}` : run.result.status);
      const failedWrite = run.steps.find((step) => step.kind !== 'side-effect' && step.failed);
      if (failedWrite) failedKinds.add(failedWrite.kind);
      if (run.result.error) expect(run.result.error.message).toContain('ENOSPC');
      await rm(path.join(mountPoint, 'filler'));
      await rm(dir, { recursive: true, force: true });
    }
    // The disk filled up inside the run for some of the sizes, and the run got through for others.
    expect(outcomes).toContain('failed:store-failed');
    expect(outcomes).toContain('succeeded');
    // The disk filled up under a journal append for some sizes, under a whole snapshot for others.
    expect([...failedKinds].sort()).toEqual(['append', 'save']);
  }, 120_000);
});
