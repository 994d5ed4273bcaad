/**
 * Checks of the prompt-cache contract of executor loops: consecutive requests of one loop share their prefix except
 * where a `cache-break` event says they do not, and each event says exactly where and how much.
 */
import type { GenerateRequest, LlmBackend, Message, PromptCacheCapability } from '../../src/backend/types.js';
import type { CacheBreakEvent, HarnessEvent } from '../../src/events.js';
import { MemoryManager } from '../../src/memory/memory-manager.js';
import type { ScriptedBackend } from '../../src/testing/index.js';

/** A ScriptedBackend whose provider caches prompts as `promptCache` says (absent: unknown). */
export function cachingBackend(scripted: ScriptedBackend, promptCache: PromptCacheCapability | undefined): LlmBackend {
  return {
    provider: scripted.provider,
    modelId: scripted.modelId,
    contextWindow: scripted.contextWindow,
    ...(promptCache ? { promptCache } : {}),
    generate: (request) => scripted.generate(request),
  };
}

const LOOP_PURPOSES = new Set(['execute', 'synthesize', 'repair']);

/** One request of a loop, with the `cache-break` events emitted since the loop's previous request. */
export interface LoopRequest {
  loop: string;
  request: GenerateRequest;
  breaks: CacheBreakEvent[];
}

/**
 * The requests of every executor loop of a run, in order, each with the breaks reported before it. `calls` are the
 * requests the backend received, in order: they pair one for one with the run's `llm-request` events.
 */
export function loopRequests(calls: readonly GenerateRequest[], events: readonly HarnessEvent[]): LoopRequest[] {
  const requests = events.filter((event) => event.type === 'llm-request');
  if (requests.length !== calls.length) throw new Error(`${requests.length} llm-request events, ${calls.length} calls`);
  const pending = new Map<string, CacheBreakEvent[]>();
  const out: LoopRequest[] = [];
  let index = 0;
  for (const event of events) {
    if (event.type === 'cache-break') {
      const loop = `${event.purpose}/${event.scope}`;
      pending.set(loop, [...(pending.get(loop) ?? []), event]);
    }
    if (event.type !== 'llm-request') continue;
    const request = calls[index++] as GenerateRequest;
    if (!LOOP_PURPOSES.has(event.purpose)) continue;
    const loop = `${event.purpose}/${event.scope}`;
    out.push({ loop, request, breaks: pending.get(loop) ?? [] });
    pending.delete(loop);
  }
  return out;
}

/** Index of the first message of `before` that `after` does not repeat as data; undefined when `after` extends it. */
export function firstDifference(before: readonly Message[], after: readonly Message[]): number | undefined {
  const i = before.findIndex((message, j) => JSON.stringify(message) !== JSON.stringify(after[j]));
  return i === -1 ? undefined : i;
}

/**
 * What breaks the contract, one line each (empty when none): a request of a loop that does not extend the loop's
 * previous one without exactly one `cache-break` before it, a break reported where the prefix held, or a break whose
 * index or lost tokens are not those of the requests. `counter` counts as the run's memory did (uncalibrated).
 */
export function prefixViolations(loopCalls: readonly LoopRequest[], counter = new MemoryManager()): string[] {
  const problems: string[] = [];
  const previous = new Map<string, GenerateRequest>();
  for (const [n, { loop, request, breaks }] of loopCalls.entries()) {
    const before = previous.get(loop);
    previous.set(loop, request);
    if (!before) {
      if (breaks.length) problems.push(`#${n} ${loop}: a break before the loop's first request`);
      continue;
    }
    const first = firstDifference(before.messages, request.messages);
    if (first === undefined) {
      if (breaks.length) problems.push(`#${n} ${loop}: ${breaks.length} break(s) reported, prefix kept`);
      continue;
    }
    if (breaks.length !== 1) {
      problems.push(`#${n} ${loop}: prefix changed at message ${first}, ${breaks.length} break(s) reported`);
      continue;
    }
    const reported = breaks[0] as CacheBreakEvent;
    const lost = counter.countRequest(before.messages.slice(first), []) - counter.countRequest([], []);
    if (reported.firstChangedMessage !== first || reported.prefixTokensLost !== lost) {
      problems.push(
        `#${n} ${loop}: changed at ${first} losing ${lost} tokens; reported ${reported.firstChangedMessage} / ` +
          `${reported.prefixTokensLost}`,
      );
    }
  }
  return problems;
}
