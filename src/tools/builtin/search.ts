import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import { HarnessError } from '../../errors.js';
import type { Tool } from '../types.js';
import { parseOptions } from './search-providers/http.js';
import type { SearchProvider, SearchResult } from './search-providers/types.js';

/** Options of {@link searchTool} and {@link googleScholarTool}. */
export interface SearchToolOptions {
  /** The search backend, e.g. `serper({ apiKey })`. */
  provider: SearchProvider;
  /**
   * Results returned when the model does not ask for a number (the model may ask for 1–20).
   * @defaultValue 10
   */
  maxResults?: number;
}

/** @internal */
export const SearchToolOptionsSchema = z.strictObject({
  provider: z.custom<SearchProvider>(
    (value) =>
      typeof value === 'object' &&
      value !== null &&
      typeof (value as SearchProvider).search === 'function' &&
      Array.isArray((value as SearchProvider).supports),
    'must be a SearchProvider (e.g. serper({ apiKey }))',
  ),
  maxResults: z.number().int().min(1).max(20).default(10),
});

const SearchInput = z.object({
  query: z.string().trim().min(1).describe('The search query.'),
  num: z.number().int().min(1).max(20).optional().describe('How many results to return (1–20).'),
});

/** Renders results as numbered structured snippets. */
export function formatSearchResults(kind: string, query: string, provider: string, results: SearchResult[]): string {
  if (results.length === 0) return `No ${kind} results for "${query}" (${provider}). Try other or fewer keywords.`;
  const lines = [`${results.length} ${kind} results for "${query}" (${provider}):`];
  results.forEach((result, index) => {
    lines.push('', `${index + 1}. ${result.title}`, `   URL: ${result.url}`);
    if (result.source) lines.push(`   Source: ${result.source}`);
    if (result.date) lines.push(`   Date: ${result.date}`);
    if (result.citedBy !== undefined) lines.push(`   Cited by: ${result.citedBy}`);
    if (result.snippet) lines.push(`   ${result.snippet.replace(/\s+/g, ' ')}`);
  });
  return lines.join('\n');
}

/** @internal Builds the `search` or `google_scholar` tool. */
export function providerSearchTool(
  type: 'web' | 'scholar',
  name: string,
  description: string,
  options: SearchToolOptions,
): Tool<z.output<typeof SearchInput>> {
  const opts = parseOptions(SearchToolOptionsSchema, options, name);
  if (!opts.provider.supports.includes(type)) {
    throw new HarnessError(
      'invalid-options',
      `${name}: option "provider" (${opts.provider.name}) cannot serve ${type} searches; use serper(…) or searxng(…).`,
    );
  }
  return defineTool({
    name,
    description,
    input: SearchInput,
    readOnly: true,
    observation: 'search',
    async execute({ query, num }, ctx) {
      const results = await opts.provider.search({ query, num: num ?? opts.maxResults, type, signal: ctx.signal });
      return formatSearchResults(type === 'scholar' ? 'scholarly' : 'web', query, opts.provider.name, results);
    },
  });
}

/**
 * The paper's `search` tool: a web search through a {@link SearchProvider}, returned as structured snippets
 * (title, URL, date, snippet).
 *
 * @example
 * ```ts
 * const search = searchTool({ provider: serper({ apiKey: process.env.SERPER_API_KEY! }) });
 * ```
 */
export function searchTool(options: SearchToolOptions): Tool<z.output<typeof SearchInput>> {
  return providerSearchTool(
    'web',
    'search',
    'Search the web. Returns ranked results with title, URL, date and snippet; use `visit` to read a page.',
    options,
  );
}
