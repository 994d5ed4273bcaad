/**
 * Option schema and result helpers shared by the provider adapters.
 * @internal
 * @module
 */
import { z } from 'zod';
import type { Dispatcher } from 'undici';
import { DEFAULT_HTTP_TIMEOUT_MS, DEFAULT_MAX_RESPONSE_BYTES } from './http.js';
import type { SearchResult } from './types.js';

/** Connection options of every adapter. */
export const HttpOptionsSchema = z.strictObject({
  baseURL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  dispatcher: z
    .custom<Dispatcher>((value) => typeof value === 'object' && value !== null, 'must be an undici Dispatcher')
    .optional(),
  timeoutMs: z.number().int().min(1).max(600_000).default(DEFAULT_HTTP_TIMEOUT_MS),
  maxResponseBytes: z.number().int().min(1_024).max(1_073_741_824).default(DEFAULT_MAX_RESPONSE_BYTES),
});

/** An API key: a non-empty string. */
export const ApiKeySchema = z
  .string({ error: 'is required (a non-empty string)' })
  .trim()
  .min(1, 'must be a non-empty string');

/** Drops results without a URL and leaves out absent optional fields. */
export function cleanResult(result: {
  title: string | undefined;
  url: string | undefined;
  snippet: string | undefined;
  date?: string | undefined;
  source?: string | undefined;
  citedBy?: number | undefined;
}): SearchResult | undefined {
  if (!result.url) return undefined;
  const clean: SearchResult = { title: result.title ?? result.url, url: result.url, snippet: result.snippet ?? '' };
  if (result.date) clean.date = result.date;
  if (result.source) clean.source = result.source;
  if (result.citedBy !== undefined) clean.citedBy = result.citedBy;
  return clean;
}

/** Keeps the defined results, at most `num`. */
export function take(results: (SearchResult | undefined)[], num: number | undefined): SearchResult[] {
  const defined = results.filter((r): r is SearchResult => r !== undefined);
  return num === undefined ? defined : defined.slice(0, num);
}
