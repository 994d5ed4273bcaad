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

/** What to mark in one request. */
export interface CacheMarkerPlan {
  /** Where each harness message ends in the wire body (`undefined` for a system message or one with no content). */
  ends: ReadonlyArray<WireBlockRef | undefined>;
  /** The request's `cacheBreakpoints`: indices of harness messages that end a stable part. */
  breakpoints: readonly number[];
  ttl: AnthropicCacheTtl;
  maxMarkers: number;
}

/**
 * Puts `cache_control` on the body's stable parts, within `maxMarkers`: the system prompt (its prefix covers the
 * tools too; without a system prompt, the last tool), a rolling marker on the newest block (so the next request of a
 * loop reads everything before it), and the request's breakpoints in between, the newest kept when there are too
 * many. Mutates `body`; returns how many markers it placed.
 */
export function placeCacheMarkers(body: Record<string, unknown>, plan: CacheMarkerPlan): number {
  const control = plan.ttl === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' };
  let budget = plan.maxMarkers;
  if (budget <= 0) return 0;
  let placed = 0;
  if (typeof body.system === 'string' && body.system !== '') {
    body.system = [{ type: 'text', text: body.system, cache_control: control }];
    budget -= 1;
    placed += 1;
  } else if (Array.isArray(body.tools) && body.tools.length > 0) {
    const tools = body.tools as Array<Record<string, unknown>>;
    tools[tools.length - 1] = { ...tools.at(-1), cache_control: control };
    budget -= 1;
    placed += 1;
  }
  const messages = body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
  const blocks: WireBlockRef[] = [];
  const lastTurn = messages.length - 1;
  const newest = lastTurn >= 0 ? { turn: lastTurn, block: (messages[lastTurn]?.content.length ?? 0) - 1 } : undefined;
  if (newest && newest.block >= 0 && budget > 0) {
    blocks.push(newest);
    budget -= 1;
  }
  const same = (a: WireBlockRef, b: WireBlockRef) => a.turn === b.turn && a.block === b.block;
  // Newest breakpoints first: when the budget runs out, the oldest are the ones left unmarked.
  const marked = [...new Set(plan.breakpoints)].sort((a, b) => b - a);
  for (const index of marked) {
    if (budget <= 0) break;
    const ref = plan.ends[index];
    if (!ref || blocks.some((b) => same(b, ref))) continue;
    blocks.push(ref);
    budget -= 1;
  }
  for (const { turn, block } of blocks) {
    const content = messages[turn]?.content;
    const target = content?.[block];
    if (!content || !target) continue;
    content[block] = { ...target, cache_control: control };
    placed += 1;
  }
  return placed;
}
