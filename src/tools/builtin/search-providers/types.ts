/**
 * The search-provider contract shared by the `search` and `google_scholar` tools.
 * @module
 */
import type { Dispatcher } from 'undici';

/** One search hit, reduced to what the model needs. */
export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
  /** Publication or crawl date as the provider reports it. */
  date?: string;
  /** Scholarly results: authors, venue and year as one line. */
  source?: string;
  /** Scholarly results: citation count. */
  citedBy?: number;
}

/** What a provider is asked for. */
export interface SearchRequest {
  query: string;
  /** Wanted number of results; providers that cannot limit return their default page. */
  num?: number;
  type: 'web' | 'scholar';
  signal?: AbortSignal;
}

/** A web (and possibly scholarly) search backend. */
export interface SearchProvider {
  /** Provider name used in observations and errors, e.g. `serper`. */
  readonly name: string;
  /** The request types this provider can serve. */
  readonly supports: readonly ('web' | 'scholar')[];
  search(request: SearchRequest): Promise<SearchResult[]>;
}

/** Connection options every HTTP-based provider accepts. */
export interface HttpProviderOptions {
  /** Override the API base URL (a proxy, a self-hosted instance, or a loopback test server). */
  baseURL?: string;
  /** undici dispatcher (Agent, ProxyAgent, MockAgent) used for every request. */
  dispatcher?: Dispatcher;
  /**
   * Per-request timeout in milliseconds.
   * @defaultValue 30000
   */
  timeoutMs?: number;
  /**
   * Largest response body read; a longer one fails with `invalid-response` instead of filling memory.
   * @defaultValue 16777216 (16 MiB)
   */
  maxResponseBytes?: number;
}
