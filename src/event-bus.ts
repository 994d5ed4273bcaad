/**
 * The event bus behind `harness.on()` and the emitters of a run: stamping, numbering, redaction and content capture.
 * The events themselves are in `events.ts`.
 * @module
 */
import { EventEmitter } from 'eventemitter3';
import {
  HARNESS_EVENT_TYPES,
  isDeltaEvent,
  type EmitEvent,
  type EventInput,
  type HarnessEvent,
  type HarnessEventType,
  type HarnessListener,
} from './events.js';

type EventMap = { [E in HarnessEvent as E['type']]: [event: E] };

/**
 * The typed event bus behind `harness.on()`, built on eventemitter3. A listener that throws never
 * breaks a run: the error goes to `onListenerError` (default `console.error`) and the other
 * listeners still run.
 */
export class HarnessEvents {
  private readonly emitter = new EventEmitter<EventMap>();
  private readonly onListenerError: (error: unknown, event: HarnessEvent) => void;
  private readonly guarded = new WeakMap<(event: never) => void, (event: HarnessEvent) => void>();
  private readonly redact: (event: HarnessEvent) => HarnessEvent;
  private contentRequests = 0;

  /**
   * `redact`: applied to every event before its listeners see it (the harness removes the secrets it knows); it
   * runs only for events someone listens to.
   */
  constructor(
    options: {
      onListenerError?: (error: unknown, event: HarnessEvent) => void;
      redact?: (event: HarnessEvent) => HarnessEvent;
    } = {},
  ) {
    this.onListenerError =
      options.onListenerError ??
      ((error, event) => console.error(`horizon-harness: a "${event.type}" listener threw`, error));
    this.redact = options.redact ?? ((event) => event);
  }

  /** Calls `listener` for every event of `type`. Returns a function that removes it. */
  on<T extends HarnessEventType>(type: T, listener: HarnessListener<T>): () => void {
    this.emitter.on(type, this.guard(listener) as never);
    return () => this.off(type, listener);
  }

  /** Calls `listener` for the next event of `type` only. */
  once<T extends HarnessEventType>(type: T, listener: HarnessListener<T>): () => void {
    this.emitter.once(type, this.guard(listener) as never);
    return () => this.off(type, listener);
  }

  /** Removes a listener added with `on` or `once`. */
  off<T extends HarnessEventType>(type: T, listener: HarnessListener<T>): void {
    const registered = this.guarded.get(listener as never);
    if (registered) this.emitter.off(type, registered as never);
  }

  /** Calls `listener` for every event of every type. Returns a function that removes it. */
  onAny(listener: (event: HarnessEvent) => void): () => void {
    const types = HARNESS_EVENT_TYPES;
    for (const type of types) this.on(type, listener as never);
    return () => {
      for (const type of types) this.off(type, listener as never);
    };
  }

  /**
   * Makes `llm-request` and `llm-response` events carry the call's messages (`content`) until the returned function
   * is called (requests are counted: content stays while any is active). Off by default: prompts are large and
   * sensitive.
   */
  captureContent(): () => void {
    this.contentRequests += 1;
    let active = true;
    return () => {
      if (active) this.contentRequests -= 1;
      active = false;
    };
  }

  /** Whether events carry content now (see {@link HarnessEvents.captureContent}). */
  get capturesContent(): boolean {
    return this.contentRequests > 0;
  }

  /** Number of listeners of one type. */
  listenerCount(type: HarnessEventType): number {
    return this.emitter.listenerCount(type);
  }

  /** Emits a fully formed event to its listeners, redacted. */
  send(event: HarnessEvent): void {
    if (this.emitter.listenerCount(event.type) === 0) return;
    this.emitter.emit(event.type, this.redact(event) as never);
  }

  /**
   * Hands an error of something that listens on the harness's behalf (the event log) to `onListenerError`, as the
   * error of a listener that threw. @internal
   */
  reportListenerError(error: unknown, event: HarnessEvent): void {
    try {
      this.onListenerError(error, event);
    } catch {
      // A broken error hook must not break the run either.
    }
  }

  private guard(listener: (event: never) => void): (event: HarnessEvent) => void {
    let guarded = this.guarded.get(listener);
    if (!guarded) {
      guarded = (event: HarnessEvent) => {
        try {
          listener(event as never);
        } catch (error) {
          this.reportListenerError(error, event);
        }
      };
      this.guarded.set(listener, guarded);
    }
    return guarded;
  }
}

/**
 * A run's event numbering, shared by its emitter (which advances it) and its snapshots (which record it). @internal
 */
export interface RunEventNumbering {
  /** Number of the last event emitted; a resumed run starts from its snapshot's `seq`. */
  lastSeq: number;
  /** Marks every event `resumed: true`. */
  resumed?: boolean;
}

/**
 * The emitter of one run: stamps and numbers each event (`seq`, advancing `numbering.lastSeq`; `resumed` for a
 * resumed run), hands it to `record` (the run report is counted from it) and sends it to `events`. A streaming delta
 * is sent only while its type has a listener, is never recorded and takes no number, so a run costs the same, and
 * numbers its events the same, with or without streaming when nobody watches.
 * @internal
 */
export function runEventSender(
  events: HarnessEvents,
  now: () => number,
  record: (event: HarnessEvent) => void,
  numbering: RunEventNumbering = { lastSeq: 0 },
): EmitEvent {
  const resumed = numbering.resumed ? ({ resumed: true } as const) : {};
  const emit = (event: EventInput): void => {
    const delta = isDeltaEvent(event);
    if (delta && events.listenerCount(event.type) === 0) return;
    const numbered = delta ? {} : { seq: ++numbering.lastSeq };
    const stamped = { ...event, timestamp: now(), ...numbered, ...resumed } as HarnessEvent;
    const bare = withoutContent(stamped);
    // The record never keeps content: a run's log must not hold every prompt it sent.
    if (!delta) record(bare);
    events.send(events.capturesContent ? stamped : bare);
  };
  return emit;
}

/** The event without the `content` that model-call events carry while content is captured. @internal */
export function withoutContent(event: HarnessEvent): HarnessEvent {
  if (!('content' in event)) return event;
  const { content: _content, ...bare } = event;
  return bare as HarnessEvent;
}

/** Builds an {@link EmitEvent} for an emitter and a clock. */
export function eventSender(events: HarnessEvents, now: () => number = Date.now): EmitEvent {
  return (event) => {
    const stamped = { ...event, timestamp: now() } as HarnessEvent;
    events.send(events.capturesContent ? stamped : withoutContent(stamped));
  };
}
