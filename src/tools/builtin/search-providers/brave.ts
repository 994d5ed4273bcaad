import { ApiKeySchema, HttpOptionsSchema, cleanResult, take } from './common.js';
import { fetchJson, joinUrl, list, parseOptions, record, text } from './http.js';
import type { HttpProviderOptions, SearchProvider, SearchRequest, SearchResult } from './types.js';

/** Options of {@link brave}. */
export interface BraveOptions extends HttpProviderOptions {
  /** Brave Search API subscription token (sent as `X-Subscription-Token`). */
  apiKey: string;
}

const BraveOptionsSchema = HttpOptionsSchema.extend({ apiKey: ApiKeySchema });

/** Brave Search API web search (`GET /res/v1/web/search`); web only, it has no scholarly index. */
export function brave(options: BraveOptions): SearchProvider {
  const opts = parseOptions(BraveOptionsSchema, options, 'brave');
  const baseURL = opts.baseURL ?? 'https://api.search.brave.com';
  return {
    name: 'brave',
    supports: ['web'],
    async search(request: SearchRequest): Promise<SearchResult[]> {
      const params = new URLSearchParams({ q: request.query });
      // Brave caps `count` at 20.
      if (request.num !== undefined) params.set('count', String(Math.min(request.num, 20)));
      const body = await fetchJson(`${joinUrl(baseURL, '/res/v1/web/search')}?${params}`, {
        headers: { 'x-subscription-token': opts.apiKey },
        dispatcher: opts.dispatcher,
        timeoutMs: opts.timeoutMs,
        maxBytes: opts.maxResponseBytes,
        signal: request.signal,
        label: 'brave',
      });
      const results = list(record(record(body).web).results).map(record);
      return take(
        results.map((item) =>
          cleanResult({
            title: text(item.title),
            url: text(item.url),
            snippet: stripTags(text(item.description)),
            date: text(item.page_age) ?? text(item.age),
          }),
        ),
        request.num,
      );
    },
  };
}

/** Brave marks query terms in snippets with `<strong>`; the model gets plain text. */
function stripTags(value: string | undefined): string | undefined {
  return value?.replace(/<\/?[a-z][^>]*>/gi, '');
}
