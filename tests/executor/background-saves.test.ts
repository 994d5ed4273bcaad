import { describe, expect, it } from 'vitest';
import type { LoopCheckpoint } from '../../src/durability/types.js';
import { BackgroundSaves } from '../../src/executor/background-saves.js';
import { CheckpointSaver } from '../../src/executor/loop-journal.js';

/** A checkpoint of `scope` whose `iterations` tells the saves apart. */
function checkpoint(scope: string, iterations: number): LoopCheckpoint {
  return {
    purpose: 'execute',
    scope,
    iterations,
    dialogue: [],
    usage: { inputTokens: 0, outputTokens: 0 },
    peakRequestTokens: 0,
    lastText: '',
    cutOff: '',
    toolFiles: [],
    invalid: { key: '', count: 0 },
    toolCalls: [],
  } as LoopCheckpoint;
}

/** A store whose writes finish only when the test lets them, recording what reached it and what is in flight. */
class HeldStore {
  readonly written: string[] = [];
  readonly held: Array<{ what: string; finish: () => void }> = [];
  /** Resolves the next time a write reaches the store. */
  private arrival: (() => void) | undefined;

  saverOf(scope: string, slots: BackgroundSaves): CheckpointSaver {
    return new CheckpointSaver(
      (saved) =>
        new Promise<void>((resolve) => {
          const what = `${scope}#${saved.iterations}`;
          this.held.push({
            what,
            finish: () => {
              this.written.push(what);
              resolve();
            },
          });
          this.arrival?.();
        }),
      slots,
    );
  }

  /** Waits until `count` writes are in flight (each turn of the event loop hands deferred saves over). */
  async untilHeld(count: number): Promise<void> {
    while (this.held.length < count) await new Promise<void>((resolve) => (this.arrival = resolve));
  }

  /** Finishes the write in flight for `what`. */
  finish(what: string): void {
    const index = this.held.findIndex((write) => write.what === what);
    const [write] = this.held.splice(index, 1);
    write?.finish();
  }
}

function afterTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Two loops sharing one slot, which loop a's first save holds: its write is in flight at the store. */
async function oneSlotHeldByA(): Promise<{ store: HeldStore; a: CheckpointSaver; b: CheckpointSaver }> {
  const store = new HeldStore();
  const slots = new BackgroundSaves(1);
  const a = store.saverOf('a', slots);
  const b = store.saverOf('b', slots);
  a.save(checkpoint('a', 1), true);
  await store.untilHeld(1);
  return { store, a, b };
}

describe('saves nobody waits for, bounded across loops', () => {
  it('hands at most the free slots to the store at once; the other loops collapse their saves while they wait', async () => {
    const store = new HeldStore();
    const slots = new BackgroundSaves(1);
    const a = store.saverOf('a', slots);
    const b = store.saverOf('b', slots);
    const aSaved = a.save(checkpoint('a', 1), true);
    const bSaved = [b.save(checkpoint('b', 1), true)];
    await store.untilHeld(1);
    // Loop b's saves wait for the one slot, held by a's write: they collapse into the newest.
    bSaved.push(b.save(checkpoint('b', 2), true), b.save(checkpoint('b', 3), true));
    await afterTurn();
    await afterTurn();
    expect(store.held.map((write) => write.what)).toEqual(['a#1']);
    store.finish('a#1');
    await aSaved;
    await store.untilHeld(1);
    expect(store.held.map((write) => write.what)).toEqual(['b#3']);
    store.finish('b#3');
    await Promise.all(bSaved);
    expect(store.written).toEqual(['a#1', 'b#3']);
  });

  it('a save a loop waits for (a side effect is declared) never waits for a slot, and takes the place of its deferred save', async () => {
    const { store, a, b } = await oneSlotHeldByA();
    const deferred = b.save(checkpoint('b', 1), true);
    await afterTurn();
    const declared = b.save(checkpoint('b', 2));
    await store.untilHeld(2);
    expect(store.held.map((write) => write.what)).toEqual(['a#1', 'b#2']);
    store.finish('b#2');
    // The deferred save is covered by the newer one, stored first.
    await Promise.all([declared, deferred]);
    expect(store.written).toEqual(['b#2']);
    // The slot b waited for passes on: a's next save gets it once a's write is done.
    store.finish('a#1');
    a.save(checkpoint('a', 2), true);
    await store.untilHeld(1);
    expect(store.held.map((write) => write.what)).toEqual(['a#2']);
    store.finish('a#2');
    await a.idle();
  });

  it("a loop's end (idle) hands its deferred save over without waiting for a slot", async () => {
    const { store, b } = await oneSlotHeldByA();
    b.save(checkpoint('b', 1), true);
    await afterTurn();
    const idle = b.idle();
    await store.untilHeld(2);
    store.finish('b#1');
    await idle;
    expect(store.written).toEqual(['b#1']);
    store.finish('a#1');
  });
});
