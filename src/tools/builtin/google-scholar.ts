import type { Tool } from '../types.js';
import { providerSearchTool, type SearchToolOptions } from './search.js';

/**
 * The paper's `google_scholar` tool: scholarly search (papers, authors, venues, citation counts) through a
 * `SearchProvider` that supports scholar queries (`serper`, `searxng`).
 */
export function googleScholarTool(options: SearchToolOptions): Tool<{ query: string; num?: number | undefined }> {
  return providerSearchTool(
    'scholar',
    'google_scholar',
    'Search scholarly literature (Google Scholar). Input: a paper title, author name or keyword phrase. ' +
      'Returns papers with authors/venue, year, citation count and link.',
    options,
  );
}
