/**
 * A run's event log as the harness keeps it: every event of the run, from the bus, to `.harness/events.jsonl` of its
 * workspace or to the host's own sink.
 * @module
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { withoutContent, type HarnessEvents } from '../event-bus.js';
import { HARNESS_EVENT_TYPES, isDeltaEvent, type HarnessEvent } from '../events.js';
import { LineBatcher } from './line-batcher.js';
import { EVENT_LOG_PATH, jsonLine } from './line.js';

/** The `eventLog` option of `createHarness`; see docs/events.md, "The event log". */
export type EventLogOption =
  | false
  | {
      /** Keep the streaming deltas (`text-delta`, `reasoning-delta`, `tool-call-delta`) too. @defaultValue false */
      deltas?: boolean | undefined;
      /**
       * Your own sink instead of the workspace file: called with each event of the run, in order, as the file would
       * have it. A returned promise is waited for before the run resolves.
       */
      write?: ((event: HarnessEvent) => void | Promise<void>) | undefined;
    };

/** Where one run's log goes in its workspace. @internal */
export interface RunLogFiles {
  /** Appends to a file of the run's workspace (the harness's own view: it still works once the run sealed it). */
  append: (path: string, text: string) => Promise<void>;
  /** The absolute path of a workspace file, to read (for the log's last byte). */
  resolve: (path: string) => Promise<string>;
}

/** A run's event log while the run lasts. @internal */
export interface RunEventLog {
  /** Stops taking events and resolves once everything the log received is written. */
  close(): Promise<void>;
}

type ReportError = (error: unknown, event: HarnessEvent) => void;

/**
 * The event logs of one harness's runs. It listens to the bus once, for every run (deltas only when the option keeps
 * them, so a run without it builds none for the log), and hands each event, redacted as listeners get it and without
 * captured `content`, to its run's sink: one lookup per event however many runs are in flight.
 * @internal
 */
export class RunEventLogs {
  readonly #sinks = new Map<string, Sink>();

  /** `onError` hears of a failed write: the file log stops at a failed append, a host sink is called again. */
  constructor(
    private readonly option: EventLogOption | undefined,
    bus: HarnessEvents,
    private readonly onError: ReportError,
  ) {
    if (option === false) return;
    const listener = (event: HarnessEvent): void => this.#sinks.get(event.runId)?.write(withoutContent(event));
    for (const type of HARNESS_EVENT_TYPES)
      if (option?.deltas === true || !isDeltaEvent({ type })) bus.on(type, listener);
  }

  /** Starts the log of run `runId`, in its workspace's `files` or the host's sink; undefined for `eventLog: false`. */
  start(runId: string, files: RunLogFiles): RunEventLog | undefined {
    const { option } = this;
    if (option === false) return undefined;
    const sink = option?.write ? hostSink(option.write, this.onError) : fileSink(files, this.onError);
    this.#sinks.set(runId, sink);
    return {
      close: async () => {
        if (this.#sinks.get(runId) === sink) this.#sinks.delete(runId);
        await sink.flush();
      },
    };
  }
}

interface Sink {
  write(event: HarnessEvent): void;
  flush(): Promise<void>;
}

/** The workspace's `.harness/events.jsonl`, appended in batches. */
function fileSink(files: RunLogFiles, onError: ReportError): Sink {
  let lastEvent: HarnessEvent | undefined;
  let first = true;
  const append = async (text: string): Promise<void> => {
    // A crash mid-append (of this run before it was resumed) may have left the last line torn: end it first.
    const separator = first && (await endsTorn(files.resolve)) ? '\n' : '';
    first = false;
    await files.append(EVENT_LOG_PATH, separator + text);
  };
  const batcher = new LineBatcher(append, (error) => onError(error, lastEvent as HarnessEvent));
  return {
    write: (event) => {
      lastEvent = event;
      batcher.add(jsonLine(event));
    },
    flush: () => batcher.flush(),
  };
}

/** True when the log exists and its last byte is not a newline. */
async function endsTorn(resolve: (path: string) => Promise<string>): Promise<boolean> {
  let file: Awaited<ReturnType<typeof open>> | undefined;
  try {
    // Non-blocking: a FIFO put at the path must not hold the open (the append refuses anything but a regular file).
    const flags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
    file = await open(await resolve(EVENT_LOG_PATH), flags);
    const stats = await file.stat();
    if (!stats.isFile() || stats.size === 0) return false;
    const { size } = stats;
    const { buffer } = await file.read(Buffer.alloc(1), 0, 1, size - 1);
    return buffer[0] !== 0x0a;
  } catch {
    // No log yet (or none readable here): nothing to end; the append itself reports what is wrong with the path.
    return false;
  } finally {
    await file?.close();
  }
}

/** The host's `write`, called in order; its promises are waited for at the end. */
function hostSink(write: (event: HarnessEvent) => void | Promise<void>, onError: ReportError): Sink {
  const pending = new Set<Promise<void>>();
  return {
    write: (event) => {
      try {
        const written = write(event);
        if (written && typeof (written as Promise<void>).then === 'function') {
          const settled = Promise.resolve(written).then(undefined, (error) => onError(error, event));
          pending.add(settled);
          void settled.finally(() => pending.delete(settled));
        }
      } catch (error) {
        onError(error, event);
      }
    },
    flush: async () => {
      await Promise.all([...pending]);
    },
  };
}
