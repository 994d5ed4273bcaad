import { z } from 'zod';
import type { Dispatcher } from 'undici';
import { defineTool } from '../define-tool.js';
import { HarnessError } from '../../errors.js';
import type { Tool } from '../types.js';
import {
  count,
  DEFAULT_MAX_RESPONSE_BYTES,
  fetchJson,
  joinUrl,
  list,
  parseOptions,
  record,
  text,
} from './search-providers/http.js';

/** Options of {@link openAlexTool}. */
export interface OpenAlexToolOptions {
  /** @defaultValue 'https://api.openalex.org' */
  baseURL?: string;
  /** Your e-mail, sent as `mailto` so requests go to OpenAlex's polite pool. */
  mailto?: string;
  /** OpenAlex API key (sent as `api_key`), for higher limits. */
  apiKey?: string;
  dispatcher?: Dispatcher;
  /** @defaultValue 30000 */
  timeoutMs?: number;
  /**
   * Largest response body read; a longer one fails with `invalid-response`.
   * @defaultValue 16777216 (16 MiB)
   */
  maxResponseBytes?: number;
  /**
   * Results per query when the model does not ask for a number (it may ask for 1–25).
   * @defaultValue 10
   */
  perPage?: number;
  /**
   * Characters of a work's reconstructed abstract shown per result.
   * @defaultValue 600
   */
  abstractChars?: number;
}

const OpenAlexOptionsSchema = z.strictObject({
  baseURL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).default('https://api.openalex.org'),
  mailto: z.email({ error: 'must be an e-mail address' }).optional(),
  apiKey: z.string().min(1).optional(),
  dispatcher: z
    .custom<Dispatcher>((value) => typeof value === 'object' && value !== null, 'must be an undici Dispatcher')
    .optional(),
  timeoutMs: z.number().int().min(1).max(600_000).default(30_000),
  maxResponseBytes: z.number().int().min(1_024).max(1_073_741_824).default(DEFAULT_MAX_RESPONSE_BYTES),
  perPage: z.number().int().min(1).max(25).default(10),
  abstractChars: z.number().int().min(0).max(20_000).default(600),
});
type Resolved = z.output<typeof OpenAlexOptionsSchema>;

const ENTITIES = ['works', 'authors', 'sources', 'institutions', 'concepts'] as const;
type Entity = (typeof ENTITIES)[number];

const OpenAlexInput = z
  .object({
    entity: z
      .enum(ENTITIES)
      .describe('What to look up: works (papers), authors, sources (venues), institutions or concepts.'),
    query: z.string().trim().min(1).optional().describe('Full-text search, e.g. a title, name or keywords.'),
    id: z
      .string()
      .trim()
      .min(1)
      .optional()
      .describe('One record by OpenAlex ID (W…, A…, S…, I…, C…), DOI, ORCID or ROR instead of a search.'),
    filter: z
      .string()
      .trim()
      .min(1)
      .optional()
      .describe('OpenAlex filter, e.g. "publication_year:2020-2024,is_oa:true" or "authorships.author.id:A123".'),
    sort: z.string().trim().min(1).optional().describe('e.g. "cited_by_count:desc" or "publication_date:desc".'),
    limit: z.number().int().min(1).max(25).optional().describe('Results to return (1–25).'),
  })
  .refine((input) => input.query !== undefined || input.id !== undefined || input.filter !== undefined, {
    message: 'give a query, an id or a filter',
  });

/** Rebuilds an abstract from OpenAlex's `abstract_inverted_index` (word → positions). */
export function abstractFromInvertedIndex(index: unknown): string | undefined {
  const words: string[] = [];
  for (const [word, positions] of Object.entries(record(index))) {
    for (const position of list(positions)) {
      if (typeof position === 'number' && Number.isInteger(position) && position >= 0 && position < 100_000) {
        words[position] = word;
      }
    }
  }
  const abstract = words.filter((w) => w !== undefined).join(' ');
  return abstract === '' ? undefined : abstract;
}

function shortId(id: unknown): string | undefined {
  return text(id)?.replace(/^https:\/\/openalex\.org\//, '');
}

function clip(value: string, max: number): string {
  return value.length <= max ? value : `${value.slice(0, max).trimEnd()}…`;
}

function names(values: unknown[], key: (item: Record<string, unknown>) => unknown, max: number): string | undefined {
  const all = values.map((v) => text(key(record(v)))).filter((v): v is string => v !== undefined);
  if (all.length === 0) return undefined;
  return all.length > max ? `${all.slice(0, max).join(', ')} et al. (${all.length})` : all.join(', ');
}

function line(label: string, value: string | number | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : `   ${label}: ${value}`;
}

function formatRecord(entity: Entity, item: Record<string, unknown>, opts: Resolved): string[] {
  const title = text(item.display_name) ?? text(item.title) ?? '(untitled)';
  const id = shortId(item.id);
  const lines: (string | undefined)[] = [];
  switch (entity) {
    case 'works': {
      const primary = record(item.primary_location);
      const abstract = abstractFromInvertedIndex(item.abstract_inverted_index);
      lines.push(
        `${title}${count(item.publication_year) ? ` (${count(item.publication_year)})` : ''}`,
        line(
          'Authors',
          names(list(item.authorships), (a) => record(a.author).display_name, 6),
        ),
        line('Venue', text(record(primary.source).display_name)),
        line('Type', text(item.type)),
        line('DOI', text(item.doi)),
        line('Cited by', count(item.cited_by_count)),
        line('Open access', text(record(item.open_access).oa_url) ?? text(record(item.best_oa_location).pdf_url)),
        line('OpenAlex', id),
        abstract && opts.abstractChars > 0 ? line('Abstract', clip(abstract, opts.abstractChars)) : undefined,
      );
      break;
    }
    case 'authors': {
      const stats = record(item.summary_stats);
      lines.push(
        title,
        line('ORCID', text(item.orcid)),
        line(
          'Institutions',
          names(list(item.last_known_institutions), (i) => i.display_name, 3),
        ),
        line('Works', count(item.works_count)),
        line('Cited by', count(item.cited_by_count)),
        line('h-index', count(stats.h_index)),
        line(
          'Top topics',
          names(list(item.topics), (t) => t.display_name, 3),
        ),
        line('OpenAlex', id),
      );
      break;
    }
    case 'sources': {
      lines.push(
        title,
        line('Type', text(item.type)),
        line('Publisher', text(item.host_organization_name)),
        line('ISSN-L', text(item.issn_l)),
        line('Open access', typeof item.is_oa === 'boolean' ? (item.is_oa ? 'yes' : 'no') : undefined),
        line('Works', count(item.works_count)),
        line('Cited by', count(item.cited_by_count)),
        line('h-index', count(record(item.summary_stats).h_index)),
        line('Homepage', text(item.homepage_url)),
        line('OpenAlex', id),
      );
      break;
    }
    case 'institutions': {
      const geo = record(item.geo);
      lines.push(
        title,
        line('Type', text(item.type)),
        line('Location', [text(geo.city), text(geo.country) ?? text(item.country_code)].filter(Boolean).join(', ')),
        line('ROR', text(item.ror)),
        line('Works', count(item.works_count)),
        line('Cited by', count(item.cited_by_count)),
        line('Homepage', text(item.homepage_url)),
        line('OpenAlex', id),
      );
      break;
    }
    case 'concepts': {
      lines.push(
        title,
        line('Level', count(item.level)),
        line('Description', text(item.description)),
        line('Works', count(item.works_count)),
        line('Cited by', count(item.cited_by_count)),
        line('Wikidata', text(item.wikidata)),
        line('OpenAlex', id),
      );
      break;
    }
  }
  return lines.filter((l): l is string => l !== undefined);
}

/** The path of a single record: OpenAlex IDs as they are, DOIs/ORCIDs/RORs in OpenAlex's `doi:`-style form. */
function recordPath(entity: Entity, id: string): string {
  const doi = /^(?:https?:\/\/(?:dx\.)?doi\.org\/|doi:)?(10\.\d{4,9}\/\S+)$/i.exec(id)?.[1];
  let key = id.replace(/^https:\/\/openalex\.org\//, '');
  if (entity === 'works' && doi) key = `doi:${doi}`;
  else if (/^https?:\/\/orcid\.org\//i.test(id) || /^\d{4}-\d{4}-\d{4}-\d{3}[\dX]$/i.test(id))
    key = `orcid:${id.replace(/^https?:\/\/orcid\.org\//i, '')}`;
  else if (/^https?:\/\/ror\.org\//i.test(id)) key = `ror:${id.replace(/^https?:\/\/ror\.org\//i, '')}`;
  return `/${entity}/${encodeURI(key).replace(/[?#]/g, encodeURIComponent)}`;
}

/**
 * The paper's `openalex` tool: works, authors, sources (venues), institutions and concepts through the OpenAlex REST
 * API, as compact structured records (works: title, year, authors, venue, DOI, citations, open-access URL, abstract).
 *
 * @example
 * ```ts
 * const openalex = openAlexTool({ mailto: 'you@example.org' });
 * ```
 */
export function openAlexTool(options: OpenAlexToolOptions = {}): Tool<z.output<typeof OpenAlexInput>> {
  const opts = parseOptions(OpenAlexOptionsSchema, options, 'openAlexTool');
  return defineTool({
    name: 'openalex',
    description:
      'Query OpenAlex, the open scholarly graph: works (papers), authors, sources (venues), institutions, concepts. ' +
      'Search with `query`, fetch one record with `id` (OpenAlex ID, DOI, ORCID, ROR), narrow with `filter`/`sort`.',
    input: OpenAlexInput,
    readOnly: true,
    observation: 'search',
    async execute(input, ctx) {
      const params = new URLSearchParams();
      if (opts.mailto) params.set('mailto', opts.mailto);
      if (opts.apiKey) params.set('api_key', opts.apiKey);
      let path: string;
      if (input.id !== undefined) {
        path = recordPath(input.entity, input.id);
      } else {
        path = `/${input.entity}`;
        if (input.query !== undefined) params.set('search', input.query);
        if (input.filter !== undefined) params.set('filter', input.filter);
        if (input.sort !== undefined) params.set('sort', input.sort);
        params.set('per-page', String(input.limit ?? opts.perPage));
      }
      const query = params.toString();
      const body = record(
        await fetchJson(`${joinUrl(opts.baseURL, path)}${query ? `?${query}` : ''}`, {
          dispatcher: opts.dispatcher,
          timeoutMs: opts.timeoutMs,
          maxBytes: opts.maxResponseBytes,
          signal: ctx.signal,
          label: 'openalex',
        }),
      );
      if (input.id !== undefined) {
        if (text(body.id) === undefined) {
          throw new HarnessError(
            'invalid-response',
            `openalex: the response for ${input.entity} ${input.id} holds no record.`,
          );
        }
        return formatRecord(input.entity, body, opts).join('\n');
      }
      const results = list(body.results).map(record);
      const total = count(record(body.meta).count);
      const what = [input.query && `"${input.query}"`, input.filter && `filter ${input.filter}`]
        .filter(Boolean)
        .join(', ');
      if (results.length === 0) return `OpenAlex: no ${input.entity} for ${what}.`;
      const out = [
        `OpenAlex ${input.entity} for ${what}: ${results.length}${total === undefined ? '' : ` of ${total}`}`,
      ];
      results.forEach((item, index) => {
        const [head, ...rest] = formatRecord(input.entity, item, opts);
        out.push('', `${index + 1}. ${head ?? ''}`, ...rest);
      });
      return out.join('\n');
    },
  });
}
