/**
 * Anthropic's prompt cache: which blocks of a Messages API body carry a `cache_control` marker, and the capability the
 * adapter declares. Pure translation, no I/O.
 * @module
 * @internal
 */
import type { PromptCacheCapability } from './types.js';

/** The most `cache_control` markers one Messages API request may carry. */
export const ANTHROPIC_MAX_CACHE_MARKERS = 4;

/** How long a cached prefix lives after its last use: Anthropic's two choices. */
export type AnthropicCacheTtl = '5m' | '1h';

/** Where a harness message ends in the wire body: the turn and the block its last content sits in. */
export interface WireBlockRef {
  turn: number;
  block: number;
}

/**
 * The shortest prefix each model caches, in tokens, per Anthropic's prompt-caching docs: 4 096 for Opus 4.5 / 4.6 and
 * Haiku 4.5, 2 048 for Sonnet 4.6 and the Haiku 3 models, 1 024 for the others. A shorter marked prefix is simply
 * not cached (no error), so an unknown model gets the common 1 024.
 */
export function anthropicMinCachePrefix(modelId: string): number {
  const match = /claude-(opus|sonnet|haiku)-(\d+)(?:[-.](\d{1,2}))?(?!\d)/.exec(modelId);
  const legacy = /claude-3(?:[-.](\d))?-(opus|sonnet|haiku)/.exec(modelId);
  if (legacy) return legacy[2] === 'haiku' ? 2_048 : 1_024;
  if (!match) return 1_024;
  const family = match[1];
  const version = Number(match[2]) + Number(match[3] ?? 0) / 10;
  if (family === 'haiku') return version >= 4 ? 4_096 : 2_048;
  if (family === 'opus' && version >= 4.5) return 4_096;
  if (family === 'sonnet' && version >= 4.6) return 2_048;
  return 1_024;
}

/** The capability an Anthropic backend declares: markers (or none when they are turned off). */
export function anthropicPromptCache(modelId: string, markers: boolean, ttl: AnthropicCacheTtl): PromptCacheCapability {
  if (!markers) return { mode: 'none' };
  return {
    mode: 'markers',
    maxMarkers: ANTHROPIC_MAX_CACHE_MARKERS,
    minPrefixTokens: anthropicMinCachePrefix(modelId),
    ttl,
  };
}

/** Which parts of a request carry a cache marker: see {@link chooseCacheMarkers}. */
export interface CacheMarkerChoice {
  /** Whether the prefix before the messages (the system prompt, or else the tools) is marked. */
  prefix: boolean;
  /** Indices of the marked messages: the newest first, then the breakpoints kept. */
  messages: number[];
}

/**
 * Where a request's `cache_control` markers go, within `maxMarkers`: the system prompt (its prefix covers the tools
 * too; without a system prompt, the last tool), a rolling marker on the newest message (so the next request of a loop
 * reads everything before it), and the request's breakpoints, the newest kept when there are too many. A message
 * that `markable` refuses (one that adds no block to the body) is skipped. The Anthropic adapter marks its bodies so,
 * and `SimulatedPromptCache` reads requests so.
 */
export function chooseCacheMarkers(request: {
  /** What stands before the messages: a system prompt, tools only, or nothing. */
  prefix: 'system' | 'tools' | undefined;
  messageCount: number;
  markable: (index: number) => boolean;
  breakpoints: readonly number[];
  maxMarkers: number;
}): CacheMarkerChoice {
  let budget = request.maxMarkers;
  const prefix = request.prefix !== undefined && budget > 0;
  if (prefix) budget -= 1;
  const messages: number[] = [];
  let newest = request.messageCount - 1;
  while (newest >= 0 && !request.markable(newest)) newest -= 1;
  if (newest >= 0 && budget > 0) {
    messages.push(newest);
    budget -= 1;
  }
  // Newest breakpoints first: when the budget runs out, the oldest are the ones left unmarked.
  for (const index of [...new Set(request.breakpoints)].sort((a, b) => b - a)) {
    if (budget <= 0) break;
    if (index < 0 || index >= request.messageCount || !request.markable(index) || messages.includes(index)) continue;
    messages.push(index);
    budget -= 1;
  }
  return { prefix, messages };
}

/** What to mark in one request's body. */
export interface CacheMarkerPlan {
  /** Where each harness message ends in the wire body (`undefined` for a system message or one with no content). */
  ends: ReadonlyArray<WireBlockRef | undefined>;
  /** The request's `cacheBreakpoints`: indices of harness messages that end a stable part. */
  breakpoints: readonly number[];
  ttl: AnthropicCacheTtl;
  maxMarkers: number;
}

/**
 * Puts `cache_control` on the blocks {@link chooseCacheMarkers} chooses: the system prompt (as a text block), or the
 * last tool; the last block of each chosen message. Mutates `body`; returns how many markers it placed.
 */
export function placeCacheMarkers(body: Record<string, unknown>, plan: CacheMarkerPlan): number {
  const control = plan.ttl === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' };
  const hasSystem = typeof body.system === 'string' && body.system !== '';
  const tools = Array.isArray(body.tools) ? (body.tools as Array<Record<string, unknown>>) : [];
  const choice = chooseCacheMarkers({
    prefix: hasSystem ? 'system' : tools.length > 0 ? 'tools' : undefined,
    messageCount: plan.ends.length,
    markable: (index) => plan.ends[index] !== undefined,
    breakpoints: plan.breakpoints,
    maxMarkers: plan.maxMarkers,
  });
  let placed = 0;
  if (choice.prefix && hasSystem) {
    body.system = [{ type: 'text', text: body.system, cache_control: control }];
    placed += 1;
  } else if (choice.prefix) {
    tools[tools.length - 1] = { ...tools.at(-1), cache_control: control };
    placed += 1;
  }
  const messages = body.messages as Array<{ content: Array<Record<string, unknown>> }>;
  for (const index of choice.messages) {
    const ref = plan.ends[index];
    const content = ref ? messages[ref.turn]?.content : undefined;
    const target = ref ? content?.[ref.block] : undefined;
    if (!ref || !content || !target) continue;
    content[ref.block] = { ...target, cache_control: control };
    placed += 1;
  }
  return placed;
}
