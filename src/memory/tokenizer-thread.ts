/**
 * A gpt-tokenizer encoding that lives in a worker thread, counted synchronously from the calling thread.
 *
 * Loading an encoding parses its rank table (a 2.4 MB JavaScript module for o200k) and builds a Map of 200 000 entries:
 * 0.3–0.7 s of CPU that gpt-tokenizer does in one synchronous piece, and a Map cannot be handed from one thread to
 * another. The table is therefore loaded, and used, in a worker: the event loop never runs the load. A count writes
 * its parts into a SharedArrayBuffer, wakes the worker and waits for the sum with `Atomics.wait` (about 13 µs more
 * per count than counting on the calling thread, see bench/tokenizer-warm-up.ts). Until the worker says it is ready, {@link TokenizerThread.countParts}
 * answers `undefined` at once and the caller bounds the text instead.
 * @module
 */
import { HarnessError } from '../errors.js';

/** UTF-16 code units one exchange with the worker carries at most (the buffer holds 256 KB of text). */
const BATCH_CHARS = 128 * 1024;
/** Parts one exchange carries at most. */
const BATCH_PARTS = 4096;
/** Characters one part may have at most: the worker passes a part's code units to `String.fromCharCode` as arguments. */
const MAX_PART_CHARS = 8192;
/** How long a count waits for the worker before it is declared hung: far beyond any count of a bounded text. */
const COUNT_TIMEOUT_MS = 60_000;

// Int32 slots at the head of the shared buffer.
const STATE = 0; // IDLE, REQUEST (the caller wrote a batch), DONE (the worker wrote the sum)
const PARTS = 1; // parts in the batch
const SUM = 2; // tokens of the batch
const LOADED = 3; // 0 while the worker loads, then READY or FAILED
const HEAD_SLOTS = 4;
const IDLE = 0;
const REQUEST = 1;
const DONE = 2;
const READY = 1;
const FAILED = 2;

/**
 * The worker's program, plain CommonJS so that it runs unchanged from the sources (tsx, vitest) and from every build,
 * with no file of its own to ship: it loads the encoding, then counts batches forever. A batch is `PARTS` lengths
 * followed by the parts' UTF-16 code units; each part is at most a few hundred characters (see bounded-count.ts).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { buffer, modulePath, batchParts } = workerData;
const head = new Int32Array(buffer, 0, ${HEAD_SLOTS});
const lengths = new Int32Array(buffer, ${HEAD_SLOTS * 4}, batchParts);
const chars = new Uint16Array(buffer, ${HEAD_SLOTS * 4} + 4 * batchParts);
let encoding;
try {
  encoding = require(modulePath);
} catch (error) {
  Atomics.store(head, ${LOADED}, ${FAILED});
  parentPort.postMessage({ loaded: false, message: String(error && error.message || error) });
}
if (encoding) {
  // Tool output is untrusted text: a literal "<|endoftext|>" counts as text, as on the calling thread.
  const noSpecialTokens = { disallowedSpecial: new Set() };
  Atomics.store(head, ${LOADED}, ${READY});
  parentPort.postMessage({ loaded: true });
  for (;;) {
    let state;
    while ((state = Atomics.load(head, ${STATE})) !== ${REQUEST}) Atomics.wait(head, ${STATE}, state);
    let sum = 0;
    let offset = 0;
    for (let i = 0; i < head[${PARTS}]; i++) {
      const end = offset + lengths[i];
      sum += encoding.countTokens(String.fromCharCode.apply(null, chars.subarray(offset, end)), noSpecialTokens);
      offset = end;
    }
    head[${SUM}] = sum;
    Atomics.store(head, ${STATE}, ${DONE});
    Atomics.notify(head, ${STATE});
  }
}
`;

/** One encoding loading or loaded in its worker thread. */
export class TokenizerThread {
  /** Resolves once the worker can count; rejects when it could not load the encoding. */
  readonly loaded: Promise<void>;
  private readonly head: Int32Array;
  private readonly lengths: Int32Array;
  private readonly chars: Uint16Array;

  /** Starts the worker, which loads the CommonJS module at `modulePath` (a gpt-tokenizer encoding). */
  constructor(modulePath: string) {
    const head = HEAD_SLOTS * 4;
    const buffer = new SharedArrayBuffer(head + 4 * BATCH_PARTS + 2 * BATCH_CHARS);
    this.head = new Int32Array(buffer, 0, HEAD_SLOTS);
    this.lengths = new Int32Array(buffer, head, BATCH_PARTS);
    this.chars = new Uint16Array(buffer, head + 4 * BATCH_PARTS);
    this.loaded = new Promise<void>((resolve, reject) => {
      const fail = (cause: unknown) => {
        Atomics.store(this.head, LOADED, FAILED);
        reject(cause);
      };
      try {
        // Loaded here, not imported: `import 'horizon-harness'` loads no builtin it does not need at once.
        const { Worker } = process.getBuiltinModule('node:worker_threads');
        const worker = new Worker(WORKER_SOURCE, {
          eval: true,
          workerData: { buffer, modulePath, batchParts: BATCH_PARTS },
          // Not the host's flags: `--input-type=module` would make this CommonJS source a module, and loaders such
          // as tsx have nothing to do here.
          execArgv: [],
        });
        // The worker waits for work forever: it must not keep the process alive.
        worker.unref();
        worker.once('message', (message: { loaded: boolean; message?: string }) =>
          message.loaded ? resolve() : fail(new Error(message.message)),
        );
        worker.once('error', fail);
      } catch (error) {
        // No worker threads here (a sandbox, a runtime without them).
        fail(error);
      }
    });
    // A failure is answered by the caller (it loads the encoding itself); an unobserved rejection would crash the host.
    this.loaded.catch(() => {});
  }

  /** True once the worker has loaded the encoding (read from shared memory: true even while this thread is busy). */
  get ready(): boolean {
    return Atomics.load(this.head, LOADED) === READY;
  }

  /** True when the worker could not load the encoding. */
  get failed(): boolean {
    return Atomics.load(this.head, LOADED) === FAILED;
  }

  /**
   * The sum of the parts' token counts, counted by the worker while this thread waits; `undefined` at once when the
   * worker is not ready. A part may have at most 8 192 characters (bounded-count.ts cuts them at 256). Throws
   * `internal` when the worker does not answer within a minute (it died).
   */
  countParts(parts: readonly string[]): number | undefined {
    if (!this.ready) return undefined;
    let sum = 0;
    let count = 0;
    let offset = 0;
    for (const part of parts) {
      if (part.length > MAX_PART_CHARS) {
        throw new HarnessError(
          'internal',
          `TokenizerThread.countParts: a part of ${part.length} characters; at most ${MAX_PART_CHARS}.`,
        );
      }
      if (count === BATCH_PARTS || offset + part.length > BATCH_CHARS) {
        sum += this.exchange(count);
        count = 0;
        offset = 0;
      }
      for (let i = 0; i < part.length; i++) this.chars[offset + i] = part.charCodeAt(i);
      this.lengths[count++] = part.length;
      offset += part.length;
    }
    return count === 0 ? sum : sum + this.exchange(count);
  }

  /** Hands the batch of `count` parts in the buffer to the worker and waits for its sum. */
  private exchange(count: number): number {
    const head = this.head;
    head[PARTS] = count;
    Atomics.store(head, STATE, REQUEST);
    Atomics.notify(head, STATE);
    while (Atomics.load(head, STATE) === REQUEST) {
      if (Atomics.wait(head, STATE, REQUEST, COUNT_TIMEOUT_MS) === 'timed-out') {
        throw new HarnessError(
          'internal',
          'The tokenizer worker thread did not answer within a minute; it may have been stopped. Restart the process, or pass a tokenizer of your own (memory.tokenizer).',
        );
      }
    }
    const sum = head[SUM] as number;
    Atomics.store(head, STATE, IDLE);
    return sum;
  }
}
