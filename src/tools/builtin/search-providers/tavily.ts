import { z } from 'zod';
import { ApiKeySchema, HttpOptionsSchema, cleanResult, take } from './common.js';
import { fetchJson, joinUrl, list, parseOptions, record, text } from './http.js';
import type { HttpProviderOptions, SearchProvider, SearchRequest, SearchResult } from './types.js';

/** Options of {@link tavily}. */
export interface TavilyOptions extends HttpProviderOptions {
  /** Tavily API key (`tvly-…`, sent as a Bearer token). */
  apiKey: string;
  /**
   * Tavily `search_depth`.
   * @defaultValue 'basic'
   */
  searchDepth?: 'basic' | 'advanced';
}

const TavilyOptionsSchema = HttpOptionsSchema.extend({
  apiKey: ApiKeySchema,
  searchDepth: z.enum(['basic', 'advanced']).default('basic'),
});

/** Tavily search (`POST /search`); web only. */
export function tavily(options: TavilyOptions): SearchProvider {
  const opts = parseOptions(TavilyOptionsSchema, options, 'tavily');
  const baseURL = opts.baseURL ?? 'https://api.tavily.com';
  return {
    name: 'tavily',
    supports: ['web'],
    async search(request: SearchRequest): Promise<SearchResult[]> {
      const payload: Record<string, unknown> = {
        query: request.query,
        search_depth: opts.searchDepth,
        topic: 'general',
      };
      // Tavily accepts 0–20 results.
      if (request.num !== undefined) payload.max_results = Math.min(request.num, 20);
      const body = await fetchJson(joinUrl(baseURL, '/search'), {
        method: 'POST',
        headers: { authorization: `Bearer ${opts.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(payload),
        dispatcher: opts.dispatcher,
        timeoutMs: opts.timeoutMs,
        maxBytes: opts.maxResponseBytes,
        signal: request.signal,
        label: 'tavily',
      });
      const results = list(record(body).results).map(record);
      return take(
        results.map((item) =>
          cleanResult({
            title: text(item.title),
            url: text(item.url),
            snippet: text(item.content),
            date: text(item.published_date),
          }),
        ),
        request.num,
      );
    },
  };
}
