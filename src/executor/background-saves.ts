/**
 * How many checkpoint saves that nobody waits for are handed to their stores at once, across the process.
 * @module
 */

/** A place in the queue for a slot: `cancel` gives it up (or gives back a slot granted and not used). */
export interface SlotRequest {
  cancel(): void;
}

/**
 * Slots for saves that nobody waits for (an executor loop's `'async'` saves of read-only steps). Every durable write
 * of the file store (an append's `fdatasync`, a snapshot's fsyncs) goes through libuv's thread pool, which the whole
 * process shares (4 threads by default). Without a bound, a thousand runs whose saves nobody waits for keep a
 * thousand `fdatasync`s queued there, and every write a run does wait for (its first snapshot, a side effect's
 * declaration, its finished snapshot) queues behind them. Bounded, a run's saves still go in order and collapse into
 * the newest while they wait for a slot (a save in flight plus the latest pending one per loop, as before), and the
 * saves a run waits for never wait for a slot.
 * @internal
 */
export class BackgroundSaves {
  #free: number;
  readonly #queue: Array<() => void> = [];

  constructor(slots: number) {
    this.#free = slots;
  }

  /** Calls `granted` once a slot is free (at once when one is); the holder gives it back with `release`. */
  request(granted: (release: () => void) => void): SlotRequest {
    let state: 'waiting' | 'held' | 'done' = 'waiting';
    const release = () => {
      if (state !== 'held') return;
      state = 'done';
      this.#release();
    };
    const grant = () => {
      if (state !== 'waiting') return this.#release();
      state = 'held';
      granted(release);
    };
    if (this.#free > 0) {
      this.#free -= 1;
      grant();
    } else {
      this.#queue.push(grant);
    }
    return {
      cancel: () => {
        if (state === 'held') release();
        // A waiting request stays queued and passes its slot on when its turn comes.
        state = state === 'waiting' ? 'done' : state;
      },
    };
  }

  #release(): void {
    const next = this.#queue.shift();
    if (next) next();
    else this.#free += 1;
  }
}

/**
 * Half of libuv's thread pool (`UV_THREADPOOL_SIZE`, 4 unless set), at least one: the other half stays for the
 * writes runs wait for and the workspace's own file work.
 */
function slotsOfThisProcess(): number {
  const pool = Number.parseInt(process.env.UV_THREADPOOL_SIZE ?? '', 10);
  return Math.max(1, Math.floor((Number.isSafeInteger(pool) && pool > 0 ? pool : 4) / 2));
}

/** The slots of this process's saves that nobody waits for. @internal */
export const backgroundSaves = new BackgroundSaves(slotsOfThisProcess());
