/**
 * `harness.stream()`: one run's events as an async iterable that ends with `run-finish` (which carries the result).
 * @module
 */
import { HarnessError } from '../errors.js';
import type { HarnessEvents } from '../event-bus.js';
import type { HarnessEvent } from '../events.js';
import type { RunResult } from '../contracts/work.js';
import { normalizeInput, type RunInput } from './input.js';

/**
 * One run as a stream of its events. Iterate it with `for await`: it yields every event of this run, and only of
 * this run, in emission order, and ends after `run-finish`, whose `result` is the run's result. Leaving the loop
 * early (`break`, `return`, a throw) aborts the run. `result` settles like `harness.run()` would.
 *
 * @example
 * ```ts
 * const run = harness.stream('Summarise report.pdf into summary.md');
 * for await (const event of run) {
 *   if (event.type === 'text-delta') process.stdout.write(event.text);
 *   if (event.type === 'run-finish') console.log(event.result.status);
 * }
 * ```
 */
export interface RunStream extends AsyncIterable<HarnessEvent> {
  /** The run's id: the input's `runId`, or the one the harness generated. Every yielded event carries it. */
  readonly runId: string;
  /**
   * The run's result, as `harness.run()` resolves it (also when the run is aborted by leaving the loop); rejects as
   * `harness.run()` rejects (invalid input, a workspace that cannot be opened).
   */
  readonly result: Promise<RunResult>;
}

/** What a stream needs from its harness. @internal */
export interface RunStreamHost {
  events: HarnessEvents;
  run(input: RunInput): Promise<RunResult>;
  generateId(): string;
}

/** Starts a run and returns its {@link RunStream}; never throws (a rejected run ends the iteration with its error). @internal */
export function startRunStream(input: RunInput, host: RunStreamHost): RunStream {
  let normalized: ReturnType<typeof normalizeInput>;
  try {
    normalized = normalizeInput(input);
  } catch (error) {
    return rejectedStream(error, host.generateId());
  }
  const runId = normalized.runId ?? host.generateId();
  const controller = new AbortController();
  const unlink = linkSignal(normalized.signal, controller);
  const buffer = new EventBuffer();
  const unsubscribe = host.events.onAny((event) => {
    if (event.runId === runId) buffer.push(event);
  });
  const result = (async () => {
    try {
      return await host.run({
        task: normalized.task,
        attachments: normalized.attachments,
        runId,
        signal: controller.signal,
        ...(normalized.store ? { store: normalized.store } : {}),
      });
    } finally {
      // No event of this run comes after it settles; events already buffered stay readable.
      unsubscribe();
      unlink();
    }
  })();
  result.then(
    () => buffer.end(),
    (error: unknown) => buffer.end(error),
  );
  const iterator = iterate(buffer, () =>
    controller.abort(new HarnessError('aborted', 'The consumer of harness.stream() stopped reading its events.')),
  );
  return { runId, result, [Symbol.asyncIterator]: () => iterator };
}

/** The stream of a run that never started: it yields nothing and throws the error, which `result` rejects with too. */
function rejectedStream(error: unknown, runId: string): RunStream {
  const result = Promise.reject(error);
  result.catch(() => undefined);
  const buffer = new EventBuffer();
  buffer.end(error);
  const iterator = iterate(buffer, () => undefined);
  return { runId, result, [Symbol.asyncIterator]: () => iterator };
}

/**
 * Yields buffered events until `run-finish` (or until the run settles without one); a run that rejected throws its
 * error. Leaving before that calls `abort`.
 */
async function* iterate(buffer: EventBuffer, abort: () => void): AsyncGenerator<HarnessEvent, void, undefined> {
  let finished = false;
  try {
    for (;;) {
      const event = buffer.take();
      if (event) {
        if (event.type === 'run-finish') finished = true;
        yield event;
        if (finished) return;
        continue;
      }
      if (buffer.ended) {
        finished = true;
        if (buffer.error !== undefined) throw buffer.error;
        return;
      }
      await buffer.next();
    }
  } finally {
    if (!finished) abort();
  }
}

/** Events waiting for the consumer, in order; unbounded (a slow consumer holds the events it has not read yet). */
class EventBuffer {
  private items: HarnessEvent[] = [];
  private head = 0;
  private wake: (() => void) | undefined;
  ended = false;
  error: unknown = undefined;

  push(event: HarnessEvent): void {
    this.items.push(event);
    this.notify();
  }

  end(error?: unknown): void {
    this.ended = true;
    this.error = error;
    this.notify();
  }

  /** The oldest unread event, or undefined when none is waiting. */
  take(): HarnessEvent | undefined {
    if (this.head >= this.items.length) return undefined;
    const event = this.items[this.head];
    this.items[this.head] = undefined as never;
    this.head += 1;
    // Drop the read prefix now and then so a long run's array does not keep growing.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return event;
  }

  /** Resolves when an event arrives or the run ends. */
  next(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

/** Aborts `controller` when the caller's signal aborts; returns the function that stops watching it. */
function linkSignal(signal: AbortSignal | undefined, controller: AbortController): () => void {
  if (!signal) return () => undefined;
  if (signal.aborted) {
    controller.abort(signal.reason);
    return () => undefined;
  }
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}
