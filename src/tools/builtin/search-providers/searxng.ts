import { z } from 'zod';
import { HttpOptionsSchema, cleanResult, take } from './common.js';
import { fetchJson, joinUrl, list, parseOptions, record, text } from './http.js';
import type { HttpProviderOptions, SearchProvider, SearchRequest, SearchResult } from './types.js';

/** Options of {@link searxng}. */
export interface SearxngOptions extends HttpProviderOptions {
  /** Base URL of the SearXNG instance; its settings must enable the `json` format. */
  baseURL: string;
  /** Sent as a Bearer token, for instances behind an authenticating proxy. */
  apiKey?: string;
  /**
   * SearXNG categories used for scholarly queries.
   * @defaultValue 'science'
   */
  scholarCategories?: string;
}

const SearxngOptionsSchema = HttpOptionsSchema.extend({
  baseURL: z.url({ protocol: /^https?$/, error: 'is required: the http(s) URL of the SearXNG instance' }),
  apiKey: z.string().min(1).optional(),
  scholarCategories: z.string().min(1).default('science'),
});

/** A SearXNG instance (`GET /search?format=json`); scholarly queries use the `science` category. */
export function searxng(options: SearxngOptions): SearchProvider {
  const opts = parseOptions(SearxngOptionsSchema, options, 'searxng');
  return {
    name: 'searxng',
    supports: ['web', 'scholar'],
    async search(request: SearchRequest): Promise<SearchResult[]> {
      const params = new URLSearchParams({
        q: request.query,
        format: 'json',
        categories: request.type === 'scholar' ? opts.scholarCategories : 'general',
      });
      const body = await fetchJson(`${joinUrl(opts.baseURL, '/search')}?${params}`, {
        headers: opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {},
        dispatcher: opts.dispatcher,
        timeoutMs: opts.timeoutMs,
        maxBytes: opts.maxResponseBytes,
        signal: request.signal,
        label: 'searxng',
      });
      const results = list(record(body).results).map(record);
      return take(
        results.map((item) =>
          cleanResult({
            title: text(item.title),
            url: text(item.url),
            snippet: text(item.content),
            date: text(item.publishedDate),
            source: scholarSource(item),
          }),
        ),
        request.num,
      );
    },
  };
}

/** Paper results (e.g. from the OpenAlex or arXiv engines) carry authors and a journal. */
function scholarSource(item: Record<string, unknown>): string | undefined {
  const authors = list(item.authors)
    .map(text)
    .filter((a): a is string => a !== undefined);
  const parts = [
    authors.length > 3 ? `${authors.slice(0, 3).join(', ')} et al.` : authors.join(', '),
    text(item.journal),
  ];
  const line = parts.filter((p) => p).join(' - ');
  return line || undefined;
}
