import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { StoreCheckpointer } from '../../src/durability/checkpointer.js';
import { SnapshotSeal } from '../../src/durability/snapshot-seal.js';
import type { RunSnapshot, RunStore } from '../../src/durability/types.js';
import { LIBRARY_VERSION } from '../../src/durability/version.js';

/** A store whose saves take a while and that records how many ran at once. */
class SlowStore implements RunStore {
  saved: RunSnapshot[] = [];
  running = 0;
  maxRunning = 0;
  fail = false;
  async save(_runId: string, snapshot: RunSnapshot): Promise<void> {
    this.running += 1;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    await sleep(2);
    this.running -= 1;
    if (this.fail) throw new Error('EACCES: permission denied');
    this.saved.push(snapshot);
  }
  load = async () => undefined;
  list = async () => [];
  delete = async () => undefined;
}

/** A store whose saves never settle until `release` is called. */
class HeldStore extends SlowStore {
  held = 0;
  #releases: Array<(value: unknown) => void> = [];
  override save(runId: string, snapshot: RunSnapshot): Promise<void> {
    this.held += 1;
    return new Promise((resolve) => this.#releases.push(resolve)).then(() => super.save(runId, snapshot));
  }
  release(): void {
    for (const release of this.#releases.splice(0)) release(undefined);
  }
}

const KEY = 'a test key of at least thirty-two bytes';

async function checkpointer(store: RunStore, warnings: string[] = [], timeoutMs = 5_000) {
  let seq = 0;
  const seal = await SnapshotSeal.forRun({ runId: 'r1', option: KEY, store });
  return {
    bump: () => {
      seq += 1;
    },
    checkpointer: new StoreCheckpointer({
      store,
      runId: 'r1',
      mode: 'pipeline',
      fingerprint: { hash: 'h', fields: { mode: 'pipeline' } },
      input: { task: 'task', attachments: [] },
      workspace: '/w',
      dataMark: '0123456789abcdef',
      now: () => 42,
      seq: () => seq,
      warn: (message) => warnings.push(message),
      timeoutMs,
      seal,
    }),
  };
}

describe('StoreCheckpointer', () => {
  it('saves one snapshot at a time, each a copy of the state when save was called; saves made meanwhile collapse into the newest', async () => {
    const store = new SlowStore();
    const { checkpointer: c, bump } = await checkpointer(store);
    const state = { records: [] as number[] };
    const saves: Promise<void>[] = [];
    for (let i = 1; i <= 3; i++) {
      state.records.push(i);
      bump();
      saves.push(c.save({ state, used: { iterations: i, elapsedMs: 0 } }));
    }
    await Promise.all(saves);
    expect(store.maxRunning).toBe(1);
    // The first save is written at once; the two made while it was written collapse into the newest.
    expect(store.saved.map((s) => (s.state as typeof state).records)).toEqual([[1, 2, 3]]);
    expect(store.saved.map((s) => s.seq)).toEqual([3]);
    state.records.push(4);
    bump();
    const first = c.save({ state, used: { iterations: 4, elapsedMs: 0 } });
    await sleep(0);
    state.records.push(5);
    bump();
    const second = c.save({ state, used: { iterations: 5, elapsedMs: 0 } });
    await Promise.all([first, second]);
    expect(store.saved.map((s) => (s.state as typeof state).records)).toEqual([
      [1, 2, 3],
      [1, 2, 3, 4],
      [1, 2, 3, 4, 5],
    ]);
    expect(store.saved[0]).toMatchObject({
      format: 2,
      library: LIBRARY_VERSION,
      runId: 'r1',
      status: 'running',
      savedAt: 42,
      dataMark: '0123456789abcdef',
      mac: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });

  it('rejects with store-failed, and every later save too, without calling the store again', async () => {
    const store = new SlowStore();
    const { checkpointer: c } = await checkpointer(store);
    store.fail = true;
    await expect(c.save({ state: 1, used: { iterations: 0, elapsedMs: 0 } })).rejects.toMatchObject({
      code: 'store-failed',
      message: expect.stringContaining('EACCES'),
    });
    store.fail = false;
    await expect(c.save({ state: 2, used: { iterations: 0, elapsedMs: 0 } })).rejects.toMatchObject({
      code: 'store-failed',
    });
    expect(store.saved).toEqual([]);
  });

  it('saves the finished snapshot with the result and the last state, and only warns when that fails', async () => {
    const store = new SlowStore();
    const warnings: string[] = [];
    const { checkpointer: c } = await checkpointer(store, warnings);
    await c.save({ state: 'last', used: { iterations: 3, elapsedMs: 9 }, loops: [{ scope: 'x' } as never] });
    await c.finish({ status: 'succeeded' });
    expect(store.saved.at(-1)).toMatchObject({ status: 'finished', state: 'last', result: { status: 'succeeded' } });
    expect(store.saved.at(-1)).not.toHaveProperty('loops');
    store.fail = true;
    await expect(c.finish({ status: 'failed' })).resolves.toBeUndefined();
    expect(warnings).toHaveLength(1);
  });
});

describe('StoreCheckpointer with a store that does not answer (issue 22)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fails a save that has not settled within the store timeout, and every later one, naming storeTimeoutMs', async () => {
    vi.useFakeTimers();
    const store = new HeldStore();
    const { checkpointer: c } = await checkpointer(store, [], 1_000);
    const first = c.save({ state: 1, used: { iterations: 0, elapsedMs: 0 } });
    const second = c.save({ state: 2, used: { iterations: 0, elapsedMs: 0 } });
    const failures = Promise.allSettled([first, second]);
    await vi.advanceTimersByTimeAsync(1_000);
    const [one, two] = await failures;
    expect(one).toMatchObject({ status: 'rejected', reason: { code: 'store-failed' } });
    expect((one as PromiseRejectedResult).reason.message).toContain('within storeTimeoutMs (1000 ms)');
    expect(two).toMatchObject({ status: 'rejected', reason: { code: 'store-failed' } });
    await expect(c.idle()).resolves.toBeUndefined();
    // The late answer of the given-up save changes nothing, and the collapsed one is never written.
    store.release();
    await vi.advanceTimersByTimeAsync(10);
    expect(store.held).toBe(1);
  });

  it('gives up on the save in flight when the run stops, and refuses the finished snapshot after it', async () => {
    const store = new HeldStore();
    const warnings: string[] = [];
    const { checkpointer: c } = await checkpointer(store, warnings);
    const stop = new AbortController();
    c.stopOn(stop.signal);
    const saving = c.save({ state: 1, used: { iterations: 0, elapsedMs: 0 } });
    const waiting = c.save({ state: 2, used: { iterations: 0, elapsedMs: 0 } });
    await vi.waitFor(() => expect(store.held).toBe(1));
    stop.abort(new Error('The run exceeded limits.timeoutMs (300 ms).'));
    await expect(waiting).rejects.toMatchObject({ code: 'store-failed' });
    await expect(saving).rejects.toMatchObject({
      code: 'store-failed',
      message: expect.stringContaining('when the run stopped (The run exceeded limits.timeoutMs (300 ms).)'),
    });
    await expect(c.idle()).resolves.toBeUndefined();
    await c.finish({ status: 'timeout' });
    expect(warnings).toHaveLength(1);
    expect(store.held).toBe(1);
  });

  it('saves the finished snapshot of a stopped run when no save was in flight', async () => {
    const store = new SlowStore();
    const { checkpointer: c } = await checkpointer(store);
    const stop = new AbortController();
    c.stopOn(stop.signal);
    await c.save({ state: 'last', used: { iterations: 1, elapsedMs: 0 } });
    stop.abort();
    await c.finish({ status: 'timeout' });
    expect(store.saved.at(-1)).toMatchObject({ status: 'finished', result: { status: 'timeout' } });
  });
});
