/**
 * Watches the requests of one executor loop for prompt-cache breaks: a request that does not start with the whole of
 * the loop's previous request, message for message and byte for byte, gets a `cache-break` event saying why and how
 * many tokens of the previous request a provider's prefix cache can no longer serve.
 * @module
 */
import type { LlmBackend, Message, Purpose } from '../backend/types.js';
import type { CacheBreakCause } from '../contracts/work.js';
import type { EventInput } from '../events.js';
import { isAged } from '../memory/aging.js';
import type { ExecutionMemory } from '../memory/types.js';

/** What the watch reports about and how it counts. */
export interface PrefixWatchHost {
  readonly memory: Pick<ExecutionMemory, 'countRequest'>;
  readonly backend: LlmBackend;
  readonly runId: string;
  readonly purpose: Purpose;
  readonly scope: string;
  emit(event: EventInput): void;
}

/** Compares each request of one loop with the one before and reports every break of the shared prefix. */
export class PrefixWatch {
  private previous: readonly Message[] | undefined;
  // What the memory reported doing to the dialogue since the previous request.
  private readonly causes = new Set<CacheBreakCause>();

  constructor(private readonly host: PrefixWatchHost) {}

  /** Notes an event the memory emitted while fitting the next request: a compression or a prune explains a break. */
  note(event: EventInput): void {
    if (event.type === 'memory-compress') this.causes.add('compression');
    if (event.type === 'memory-prune') this.causes.add(event.reason === 'emergency-threshold' ? 'emergency' : 'prune');
  }

  /** Compares the request about to be sent with the previous one and emits `cache-break` when it does not extend it. */
  sending(messages: readonly Message[]): void {
    const previous = this.previous;
    const causes = [...this.causes];
    // A copy: the loop goes on appending to the dialogue it sent.
    this.previous = messages.slice();
    this.causes.clear();
    if (!previous) return;
    const first = firstDifference(previous, messages);
    if (first === undefined) return;
    const { memory, backend, runId, purpose, scope } = this.host;
    // The per-request overhead is no part of what was lost.
    const lost = memory.countRequest(previous.slice(first), [], backend) - memory.countRequest([], [], backend);
    this.host.emit({
      type: 'cache-break',
      runId,
      purpose,
      scope,
      cause: causeOf(causes, previous[first], messages[first]),
      firstChangedMessage: first,
      prefixTokensLost: Math.max(0, lost),
    });
  }
}

/** Index of the first message of `previous` that `next` does not repeat exactly; undefined when `next` extends it. */
function firstDifference(previous: readonly Message[], next: readonly Message[]): number | undefined {
  for (let i = 0; i < previous.length; i++) {
    const before = previous[i];
    const after = next[i];
    // The memory keeps unchanged messages as the same objects; any other copy must match as data.
    if (before === after) continue;
    if (after === undefined || JSON.stringify(before) !== JSON.stringify(after)) return i;
  }
  return undefined;
}

/** The cause of a break: a prune or compression the memory reported, else what the first changed message shows. */
function causeOf(reported: readonly CacheBreakCause[], before: Message | undefined, after: Message | undefined) {
  const known = (['emergency', 'prune', 'compression'] as const).find((cause) => reported.includes(cause));
  if (known) return known;
  if (before && after && isAged(after) && !isAged(before)) return 'aging';
  return 'other';
}
