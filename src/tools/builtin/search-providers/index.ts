/**
 * Search providers for the `search` and `google_scholar` tools: Serper, Brave, Tavily and SearXNG.
 * @module
 */
export type { HttpProviderOptions, SearchProvider, SearchRequest, SearchResult } from './types.js';
export { serper, type SerperOptions } from './serper.js';
export { brave, type BraveOptions } from './brave.js';
export { tavily, type TavilyOptions } from './tavily.js';
export { searxng, type SearxngOptions } from './searxng.js';
