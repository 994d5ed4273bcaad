import { afterEach, describe, expect, it } from 'vitest';
import { abstractFromInvertedIndex, openAlexTool } from '../../../src/tools/builtin/openalex.js';
import { createTestContext, type TestContext, zodInput } from './support/context.js';
import { sendJson, startServer, type LoopbackServer } from './support/server.js';

let server: LoopbackServer | undefined;
let test: TestContext | undefined;
afterEach(async () => {
  await server?.close();
  await test?.dispose();
  server = undefined;
  test = undefined;
});

const WORK = {
  id: 'https://openalex.org/W2741809807',
  doi: 'https://doi.org/10.7717/peerj.4375',
  title: 'The state of OA: a large-scale analysis of the prevalence and impact of Open Access articles',
  display_name: 'The state of OA: a large-scale analysis of the prevalence and impact of Open Access articles',
  publication_year: 2018,
  type: 'article',
  cited_by_count: 1093,
  open_access: { is_oa: true, oa_status: 'gold', oa_url: 'https://peerj.com/articles/4375.pdf' },
  primary_location: { source: { id: 'https://openalex.org/S1983995261', display_name: 'PeerJ' } },
  authorships: [
    { author_position: 'first', author: { id: 'https://openalex.org/A5023888391', display_name: 'Heather Piwowar' } },
    { author_position: 'middle', author: { display_name: 'Jason Priem' } },
    { author_position: 'last', author: { display_name: 'Stefanie Haustein' } },
  ],
  abstract_inverted_index: { Despite: [0], growing: [1], interest: [2], in: [3], Open: [4], Access: [5] },
};

async function run(input: Record<string, unknown>, options: Parameters<typeof openAlexTool>[0] = {}): Promise<string> {
  test ??= await createTestContext();
  const tool = openAlexTool({ baseURL: server?.url, ...options });
  return String(await tool.execute(zodInput(tool).parse(input), test.ctx));
}

describe('abstractFromInvertedIndex', () => {
  it('puts the words back in position order', () => {
    expect(abstractFromInvertedIndex({ world: [1], hello: [0, 2] })).toBe('hello world hello');
    expect(abstractFromInvertedIndex(null)).toBeUndefined();
  });
});

describe('openAlexTool', () => {
  it('searches works with the polite mailto and shows compact records', async () => {
    server = await startServer((_req, res) =>
      sendJson(res, { meta: { count: 2371, page: 1, per_page: 2 }, results: [WORK] }),
    );
    const text = await run(
      { entity: 'works', query: 'open access prevalence', limit: 2 },
      { mailto: 'me@example.org' },
    );
    const url = new URL(server.requests[0]?.url ?? '', server.url);
    expect(url.pathname).toBe('/works');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      mailto: 'me@example.org',
      search: 'open access prevalence',
      'per-page': '2',
    });
    expect(text).toBe(
      [
        'OpenAlex works for "open access prevalence": 1 of 2371',
        '',
        '1. The state of OA: a large-scale analysis of the prevalence and impact of Open Access articles (2018)',
        '   Authors: Heather Piwowar, Jason Priem, Stefanie Haustein',
        '   Venue: PeerJ',
        '   Type: article',
        '   DOI: https://doi.org/10.7717/peerj.4375',
        '   Cited by: 1093',
        '   Open access: https://peerj.com/articles/4375.pdf',
        '   OpenAlex: W2741809807',
        '   Abstract: Despite growing interest in Open Access',
      ].join('\n'),
    );
  });

  it('fetches one work by DOI', async () => {
    server = await startServer((_req, res) => sendJson(res, WORK));
    const text = await run({ entity: 'works', id: 'https://doi.org/10.7717/peerj.4375' });
    expect(server.requests[0]?.url).toBe('/works/doi:10.7717/peerj.4375');
    expect(text.split('\n')[0]).toBe(`${WORK.title} (2018)`);
  });

  it('formats authors, sources, institutions and concepts', async () => {
    const bodies: Record<string, unknown> = {
      '/authors': {
        meta: { count: 1 },
        results: [
          {
            id: 'https://openalex.org/A5023888391',
            display_name: 'Heather Piwowar',
            orcid: 'https://orcid.org/0000-0003-1613-5981',
            works_count: 60,
            cited_by_count: 4000,
            summary_stats: { h_index: 20 },
            last_known_institutions: [{ display_name: 'OurResearch' }],
          },
        ],
      },
      '/sources': {
        meta: { count: 1 },
        results: [
          {
            id: 'https://openalex.org/S1983995261',
            display_name: 'PeerJ',
            type: 'journal',
            issn_l: '2167-8359',
            host_organization_name: 'PeerJ, Inc.',
            is_oa: true,
            works_count: 20000,
          },
        ],
      },
      '/institutions': {
        meta: { count: 1 },
        results: [
          {
            id: 'https://openalex.org/I27837315',
            display_name: 'University of Michigan',
            type: 'education',
            ror: 'https://ror.org/00jmfr291',
            geo: { city: 'Ann Arbor', country: 'United States' },
            works_count: 500000,
          },
        ],
      },
      '/concepts': {
        meta: { count: 1 },
        results: [
          {
            id: 'https://openalex.org/C41008148',
            display_name: 'Computer science',
            level: 0,
            description: 'theoretical study of computation',
            works_count: 1000,
          },
        ],
      },
    };
    server = await startServer((req, res) => sendJson(res, bodies[new URL(req.url, 'http://x').pathname] ?? {}, 200));
    const authors = await run({ entity: 'authors', query: 'piwowar' });
    expect(authors).toContain('1. Heather Piwowar');
    expect(authors).toContain('ORCID: https://orcid.org/0000-0003-1613-5981');
    expect(authors).toContain('Institutions: OurResearch');
    expect(authors).toContain('h-index: 20');
    const sources = await run({ entity: 'sources', query: 'peerj' });
    expect(sources).toContain('Publisher: PeerJ, Inc.');
    expect(sources).toContain('ISSN-L: 2167-8359');
    const institutions = await run({ entity: 'institutions', query: 'michigan' });
    expect(institutions).toContain('Location: Ann Arbor, United States');
    expect(institutions).toContain('ROR: https://ror.org/00jmfr291');
    const concepts = await run({ entity: 'concepts', query: 'computer science' });
    expect(concepts).toContain('Level: 0');
    expect(concepts).toContain('Description: theoretical study of computation');
  });

  it('passes filter and sort through', async () => {
    server = await startServer((_req, res) => sendJson(res, { meta: { count: 0 }, results: [] }));
    const text = await run({
      entity: 'works',
      filter: 'publication_year:2024,is_oa:true',
      sort: 'cited_by_count:desc',
    });
    const url = new URL(server.requests[0]?.url ?? '', server.url);
    expect(url.searchParams.get('filter')).toBe('publication_year:2024,is_oa:true');
    expect(url.searchParams.get('sort')).toBe('cited_by_count:desc');
    expect(text).toBe('OpenAlex: no works for filter publication_year:2024,is_oa:true.');
  });

  it('needs a query, an id or a filter', () => {
    expect(zodInput(openAlexTool()).safeParse({ entity: 'works' }).success).toBe(false);
  });

  it('turns HTTP errors into HarnessErrors', async () => {
    const statuses = [429, 404];
    server = await startServer((_req, res) => sendJson(res, { error: 'x' }, statuses.shift() ?? 500));
    test = await createTestContext();
    const tool = openAlexTool({ baseURL: server.url });
    await expect(tool.execute(zodInput(tool).parse({ entity: 'works', query: 'a' }), test.ctx)).rejects.toMatchObject({
      code: 'rate-limited',
    });
    await expect(tool.execute(zodInput(tool).parse({ entity: 'works', id: 'W1' }), test.ctx)).rejects.toMatchObject({
      code: 'bad-request',
    });
  });

  it('is read-only with the search observation and validates options', () => {
    const tool = openAlexTool();
    expect([tool.name, tool.readOnly, tool.observation]).toEqual(['openalex', true, 'search']);
    expect(() => openAlexTool({ mailto: 'not-an-email' })).toThrowError(/openAlexTool: option "mailto"/);
  });
});
