import { ApiKeySchema, HttpOptionsSchema, cleanResult, take } from './common.js';
import { count, fetchJson, joinUrl, list, parseOptions, record, text } from './http.js';
import type { HttpProviderOptions, SearchProvider, SearchRequest, SearchResult } from './types.js';

/** Options of {@link serper}. */
export interface SerperOptions extends HttpProviderOptions {
  /** Serper API key (sent as `X-API-KEY`). */
  apiKey: string;
}

const SerperOptionsSchema = HttpOptionsSchema.extend({ apiKey: ApiKeySchema });

/**
 * Serper (google.serper.dev), the paper's search backend: `POST /search` for the web, `POST /scholar` for Google Scholar.
 *
 * @example
 * ```ts
 * const provider = serper({ apiKey: process.env.SERPER_API_KEY! });
 * const tools = [searchTool({ provider }), googleScholarTool({ provider })];
 * ```
 */
export function serper(options: SerperOptions): SearchProvider {
  const opts = parseOptions(SerperOptionsSchema, options, 'serper');
  const baseURL = opts.baseURL ?? 'https://google.serper.dev';
  return {
    name: 'serper',
    supports: ['web', 'scholar'],
    async search(request: SearchRequest): Promise<SearchResult[]> {
      const body = await fetchJson(joinUrl(baseURL, request.type === 'scholar' ? '/scholar' : '/search'), {
        method: 'POST',
        headers: { 'x-api-key': opts.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify(request.num === undefined ? { q: request.query } : { q: request.query, num: request.num }),
        dispatcher: opts.dispatcher,
        timeoutMs: opts.timeoutMs,
        maxBytes: opts.maxResponseBytes,
        signal: request.signal,
        label: 'serper',
      });
      const organic = list(record(body).organic).map(record);
      return take(
        organic.map((item) =>
          request.type === 'scholar'
            ? cleanResult({
                title: text(item.title),
                url: text(item.link) ?? text(item.pdfUrl),
                snippet: text(item.snippet),
                date: text(item.year),
                source: text(item.publicationInfo),
                citedBy: count(item.citedBy),
              })
            : cleanResult({
                title: text(item.title),
                url: text(item.link),
                snippet: text(item.snippet),
                date: text(item.date),
              }),
        ),
        request.num,
      );
    },
  };
}
