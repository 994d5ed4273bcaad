/**
 * A provider's prompt cache, simulated for tests and benchmarks: it remembers the prefixes it was sent and reports
 * cache reads and writes the way Anthropic (marker-based) or OpenAI (automatic) would, deterministically.
 * @module
 */
import type {
  GenerateRequest,
  GenerateResult,
  LlmBackend,
  Message,
  PromptCacheCapability,
  StreamPart,
  ToolSpec,
} from '../backend/types.js';
import { chooseCacheMarkers } from '../backend/anthropic-cache.js';
import { HarnessError } from '../errors.js';
import { gptTokenizer, type Tokenizer } from '../memory/tokenizer.js';

/** Options of {@link SimulatedPromptCache}. */
export interface SimulatedPromptCacheOptions {
  /**
   * `'markers'`: Anthropic's model, a prefix is cached only where a request marks it (`cache_control`); `'automatic'`:
   * OpenAI's, every prefix of at least `minPrefixTokens` is cached.
   */
  mode: 'markers' | 'automatic';
  /** The shortest prefix cached. @defaultValue 1024 */
  minPrefixTokens?: number;
  /** Automatic mode: cached prefixes are counted in steps of this many tokens above the minimum. @defaultValue 128 */
  stepTokens?: number;
  /** Markers mode: the most markers a request carries (as the Anthropic adapter places them). @defaultValue 4 */
  maxMarkers?: number;
  /**
   * Markers mode: how far before each marker the provider looks for a prefix it cached, in parts (one tool spec or
   * one message each). Anthropic looks back 20 content blocks; a message holds one block or more, so 20 parts reach
   * at least as far as Anthropic does. @defaultValue no limit
   */
  lookbackParts?: number;
  /** How long a cached prefix lives after its last use, in milliseconds. @defaultValue 300000 (5 minutes) */
  ttlMs?: number;
  /** The clock the TTL is measured on; tests drive it by hand. @defaultValue `Date.now` */
  now?: () => number;
  /** Counts each part of a request. @defaultValue the harness's own `gptTokenizer()` */
  tokenizer?: Tokenizer;
}

/** What a provider would report for one request's input. */
export interface SimulatedInputUsage {
  /** The request's tokens (tools and messages, as the simulation counts them). */
  inputTokens: number;
  /** Tokens read from the cache. */
  cachedInputTokens: number;
  /** Tokens written to the cache (markers mode only; automatic caching bills no writes). */
  cacheWriteInputTokens: number;
}

/** What the cache is asked about: a request's tools, messages and cache breakpoints. */
export type CacheableRequest = Pick<GenerateRequest, 'messages' | 'tools' | 'cacheBreakpoints'>;

interface Entry {
  tokens: number;
  expiresAt: number;
}

/** One request cut into the parts a prefix can end after: each tool spec, then each message. */
interface Parts {
  /** Hash of the prefix that ends after part `i` (it depends on every part before). */
  prefixHashes: string[];
  /** Tokens of the prefix that ends after part `i`. */
  prefixTokens: number[];
  /** How many of the parts are tool specs (the messages follow them). */
  toolCount: number;
}

const FIVE_MINUTES_MS = 5 * 60 * 1000;

/**
 * A simulated provider prompt cache, per cache key. `observe(request)` returns the input figures the provider would
 * report and remembers what it cached:
 * - markers (Anthropic): the request's markers are where the Anthropic adapter puts them (the system prompt, or the
 *   last tool without one; the newest message; the `cacheBreakpoints`, newest first, within `maxMarkers`). The read
 *   is the longest prefix written before and still alive that this request starts with; the write is what lies
 *   between that read and the furthest marker (when it is at least `minPrefixTokens` long).
 * - automatic (OpenAI): the read is the longest prefix seen before and alive, if at least `minPrefixTokens`, counted
 *   down to `minPrefixTokens + k × stepTokens`; nothing is billed as a write.
 *
 * Requests are compared a part at a time (each tool spec, each message, serialised canonically and counted with the
 * tokenizer): a message that changed is a miss from its start, where a provider might still match its first tokens.
 * The cache reads the clock it is given and nothing else, so its figures are the same on every run.
 */
export class SimulatedPromptCache {
  private readonly stores = new Map<string, Map<string, Entry>>();
  private readonly partTokens = new Map<string, number>();
  private readonly partHashes = new Map<string, string>();
  private readonly minPrefix: number;
  private readonly step: number;
  private readonly maxMarkers: number;
  private readonly lookback: number;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly tokenizer: Tokenizer;

  constructor(readonly options: SimulatedPromptCacheOptions) {
    if (options.mode !== 'markers' && options.mode !== 'automatic') {
      throw new HarnessError('invalid-options', "SimulatedPromptCache needs `mode: 'markers'` or `mode: 'automatic'`.");
    }
    this.minPrefix = options.minPrefixTokens ?? 1_024;
    this.step = Math.max(1, options.stepTokens ?? 128);
    this.maxMarkers = options.maxMarkers ?? 4;
    this.lookback = options.lookbackParts ?? Number.POSITIVE_INFINITY;
    this.ttlMs = options.ttlMs ?? FIVE_MINUTES_MS;
    this.now = options.now ?? Date.now;
    this.tokenizer = options.tokenizer ?? gptTokenizer();
  }

  /** The capability a backend with this cache declares. */
  get capability(): PromptCacheCapability {
    return this.options.mode === 'markers'
      ? { mode: 'markers', minPrefixTokens: this.minPrefix, maxMarkers: this.maxMarkers }
      : { mode: 'automatic', minPrefixTokens: this.minPrefix };
  }

  /**
   * Resolves once the tokenizer counts (the default `gptTokenizer()` loads its table in a worker thread and answers
   * byte bounds until then): await it before calling {@link observe} directly, or the figures depend on the load.
   * `withSimulatedPromptCache` does.
   */
  async ready(): Promise<void> {
    await this.tokenizer.ready?.();
  }

  /** The input figures a provider would report for `request` under `key`; remembers what the request cached. */
  observe(request: CacheableRequest, key = 'default'): SimulatedInputUsage {
    const parts = this.cut(request);
    const store = this.storeOf(key);
    const now = this.now();
    const total = parts.prefixTokens.at(-1) ?? 0;
    if (this.options.mode === 'automatic') {
      const hit = this.longestAlive(parts, store, now, () => true);
      const read = hit && hit.tokens >= this.minPrefix ? this.roundToStep(hit.tokens) : 0;
      parts.prefixHashes.forEach((hash, i) => {
        this.keep(store, hash, parts.prefixTokens[i] ?? 0, now);
      });
      return { inputTokens: total, cachedInputTokens: read, cacheWriteInputTokens: 0 };
    }
    const marked = this.markedParts(request, parts);
    // The provider looks for a cached prefix only a few blocks back from each marker.
    const reachable = Number.isFinite(this.lookback)
      ? (part: number) => marked.some((m) => part <= m && m - part <= this.lookback)
      : () => true;
    const hit = this.longestAlive(parts, store, now, reachable);
    const read = hit?.tokens ?? 0;
    if (hit) this.keep(store, hit.hash, hit.tokens, now);
    let furthest = 0;
    for (const part of marked) {
      const tokens = parts.prefixTokens[part] ?? 0;
      if (tokens < this.minPrefix) continue;
      this.keep(store, parts.prefixHashes[part] ?? '', tokens, now);
      furthest = Math.max(furthest, tokens);
    }
    return { inputTokens: total, cachedInputTokens: read, cacheWriteInputTokens: Math.max(0, furthest - read) };
  }

  private storeOf(key: string): Map<string, Entry> {
    let store = this.stores.get(key);
    if (!store) {
      store = new Map();
      this.stores.set(key, store);
    }
    return store;
  }

  private keep(store: Map<string, Entry>, hash: string, tokens: number, now: number): void {
    store.set(hash, { tokens, expiresAt: now + this.ttlMs });
  }

  /** The longest prefix of the request that is in the store, alive, and ends at a part the provider looks at. */
  private longestAlive(parts: Parts, store: Map<string, Entry>, now: number, reachable: (part: number) => boolean) {
    for (let i = parts.prefixHashes.length - 1; i >= 0; i -= 1) {
      if (!reachable(i)) continue;
      const hash = parts.prefixHashes[i] ?? '';
      const entry = store.get(hash);
      if (entry && entry.expiresAt > now) return { hash, tokens: entry.tokens };
    }
    return undefined;
  }

  private roundToStep(tokens: number): number {
    return this.minPrefix + Math.floor((tokens - this.minPrefix) / this.step) * this.step;
  }

  /** The parts a markers request marks: where the Anthropic adapter puts its markers. */
  private markedParts(request: CacheableRequest, parts: Parts): number[] {
    const messages = request.messages;
    const lastSystem = messages.findLastIndex((m) => m.role === 'system');
    const choice = chooseCacheMarkers({
      prefix: lastSystem >= 0 ? 'system' : parts.toolCount > 0 ? 'tools' : undefined,
      messageCount: messages.length,
      markable: (index) => messages[index]?.role !== 'system',
      breakpoints: request.cacheBreakpoints ?? [],
      maxMarkers: this.maxMarkers,
    });
    // Parts: the tool specs, then the system messages, then the others (see cut).
    const systemCount = messages.filter((m) => m.role === 'system').length;
    const order = [
      ...messages.flatMap((m, i) => (m.role === 'system' ? [i] : [])),
      ...messages.flatMap((m, i) => (m.role === 'system' ? [] : [i])),
    ];
    const partOf = (index: number) => parts.toolCount + order.indexOf(index);
    const marked = choice.messages.map(partOf);
    if (choice.prefix) marked.push(systemCount > 0 ? parts.toolCount + systemCount - 1 : parts.toolCount - 1);
    return marked;
  }

  /** Cuts a request into its parts: tool specs, then system messages, then the others, each counted once. */
  private cut(request: CacheableRequest): Parts {
    const tools = request.tools ?? [];
    // Providers put the system prompt ahead of the dialogue, whatever its place in the list.
    const ordered = [
      ...request.messages.filter((m) => m.role === 'system'),
      ...request.messages.filter((m) => m.role !== 'system'),
    ];
    const texts = [...tools.map(canonicalTool), ...ordered.map(canonicalMessage)];
    const prefixHashes: string[] = [];
    const prefixTokens: number[] = [];
    let hash = '';
    let tokens = 0;
    for (const text of texts) {
      hash = sha256(hash + this.hashOf(text));
      tokens += this.tokensOf(text);
      prefixHashes.push(hash);
      prefixTokens.push(tokens);
    }
    return { prefixHashes, prefixTokens, toolCount: tools.length };
  }

  private tokensOf(text: string): number {
    let tokens = this.partTokens.get(text);
    if (tokens === undefined) {
      tokens = this.tokenizer.count(text);
      this.partTokens.set(text, tokens);
    }
    return tokens;
  }

  private hashOf(text: string): string {
    let hash = this.partHashes.get(text);
    if (hash === undefined) {
      hash = sha256(text);
      this.partHashes.set(text, hash);
    }
    return hash;
  }
}

/** The SHA-256 of a text, in hex; node:crypto is loaded on first use, as everywhere in the library. */
function sha256(text: string): string {
  return process.getBuiltinModule('node:crypto').createHash('sha256').update(text).digest('hex');
}

/** A JSON text of `value` with its object keys sorted, so equal values serialise alike whatever their key order. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}

function canonicalTool(tool: ToolSpec): string {
  return canonicalJson({ tool: tool.name, description: tool.description, input: tool.inputSchema });
}

function canonicalMessage(message: Message): string {
  return canonicalJson(message);
}

/** Options of {@link withSimulatedPromptCache}: the cache's, and the key each request is cached under. */
export interface SimulatedPromptCacheBackendOptions extends SimulatedPromptCacheOptions {
  /** The cache a request goes to. @defaultValue the backend's `modelId` */
  cacheKey?: (request: GenerateRequest) => string;
  /** A cache to share between backends (then its own options apply, not these). */
  cache?: SimulatedPromptCache;
}

/**
 * `backend` with a simulated provider prompt cache: every call's usage reports the input as
 * {@link SimulatedPromptCache} counts it (`inputTokens`, `cachedInputTokens`, `cacheWriteInputTokens`), the output
 * as `backend` reported it; the backend declares the cache's `promptCache` capability, so the harness treats it as
 * a caching provider. Wrap a `ScriptedBackend` to test or measure cache behaviour without a provider.
 *
 * @example
 * ```ts
 * let now = 0;
 * const backend = withSimulatedPromptCache(new ScriptedBackend(script, { pricing }), { mode: 'markers', now: () => now });
 * const result = await createHarness({ backend }).run(task);
 * result.report.byPurpose.execute?.cacheHitRatio; // the share of input read from the simulated cache
 * ```
 */
export function withSimulatedPromptCache(backend: LlmBackend, options: SimulatedPromptCacheBackendOptions): LlmBackend {
  const cache = options.cache ?? new SimulatedPromptCache(options);
  const keyOf = options.cacheKey ?? (() => backend.modelId);
  const withUsage = (request: GenerateRequest, result: GenerateResult): GenerateResult => ({
    ...result,
    usage: { ...cache.observe(request, keyOf(request)), outputTokens: result.usage?.outputTokens ?? 0 },
  });
  const stream = backend.stream?.bind(backend);
  return {
    provider: backend.provider,
    modelId: backend.modelId,
    contextWindow: backend.contextWindow,
    ...(backend.supportsImages === undefined ? {} : { supportsImages: backend.supportsImages }),
    ...(backend.streaming === undefined ? {} : { streaming: backend.streaming }),
    ...(backend.pricing ? { pricing: backend.pricing } : {}),
    promptCache: cache.capability,
    generate: async (request) => {
      const result = await backend.generate(request);
      await cache.ready();
      return withUsage(request, result);
    },
    ...(stream
      ? {
          async *stream(request: GenerateRequest): AsyncGenerator<StreamPart> {
            for await (const part of stream(request)) {
              if (part.type === 'finish') await cache.ready();
              yield part.type === 'finish' ? { type: 'finish', result: withUsage(request, part.result) } : part;
            }
          },
        }
      : {}),
  };
}
