import { afterEach, describe, expect, it } from 'vitest';
import { HarnessError, type ProviderHttpError } from '../../../src/errors.js';
import { searchTool } from '../../../src/tools/builtin/search.js';
import { brave, searxng, serper, tavily } from '../../../src/tools/builtin/search-providers/index.js';
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

async function caught(promise: Promise<unknown>): Promise<HarnessError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(HarnessError.isInstance(error), `expected a HarnessError, got ${String(error)}`).toBe(true);
  return error as HarnessError;
}

describe('serper', () => {
  it('POSTs /search with the key header and maps organic results', async () => {
    server = await startServer((_req, res) =>
      sendJson(res, {
        searchParameters: { q: 'apple inc', type: 'search' },
        organic: [
          {
            title: 'Apple',
            link: 'https://www.apple.com/',
            snippet: 'Discover the innovative world of Apple.',
            position: 1,
          },
          {
            title: 'Apple Inc. - Wikipedia',
            link: 'https://en.wikipedia.org/wiki/Apple_Inc.',
            snippet: 'Apple Inc. is an American company.',
            date: 'Mar 3, 2025',
            position: 2,
          },
          { title: 'no link' },
        ],
      }),
    );
    const provider = serper({ apiKey: 'sk-serper', baseURL: server.url });
    const results = await provider.search({ query: 'apple inc', num: 5, type: 'web' });
    expect(results).toEqual([
      { title: 'Apple', url: 'https://www.apple.com/', snippet: 'Discover the innovative world of Apple.' },
      {
        title: 'Apple Inc. - Wikipedia',
        url: 'https://en.wikipedia.org/wiki/Apple_Inc.',
        snippet: 'Apple Inc. is an American company.',
        date: 'Mar 3, 2025',
      },
    ]);
    const request = server.requests[0];
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/search');
    expect(request?.headers['x-api-key']).toBe('sk-serper');
    expect(JSON.parse(request?.body ?? '')).toEqual({ q: 'apple inc', num: 5 });
  });

  it('POSTs /scholar and keeps publication info, year and citations', async () => {
    server = await startServer((_req, res) =>
      sendJson(res, {
        organic: [
          {
            title: 'Attention is all you need',
            link: 'https://proceedings.neurips.cc/paper/7181',
            publicationInfo: 'A Vaswani, N Shazeer, N Parmar - Advances in neural information processing systems, 2017',
            snippet: 'The dominant sequence transduction models are based on complex recurrent networks.',
            year: 2017,
            citedBy: 150000,
            pdfUrl: 'https://arxiv.org/pdf/1706.03762',
          },
        ],
      }),
    );
    const results = await serper({ apiKey: 'k', baseURL: server.url }).search({
      query: 'transformer',
      type: 'scholar',
    });
    expect(server.requests[0]?.url).toBe('/scholar');
    expect(results).toEqual([
      {
        title: 'Attention is all you need',
        url: 'https://proceedings.neurips.cc/paper/7181',
        snippet: 'The dominant sequence transduction models are based on complex recurrent networks.',
        date: '2017',
        source: 'A Vaswani, N Shazeer, N Parmar - Advances in neural information processing systems, 2017',
        citedBy: 150000,
      },
    ]);
  });

  it('rejects a missing API key at creation', () => {
    expect(() => serper({ apiKey: '' })).toThrowError(/serper: option "apiKey"/);
  });
});

describe('brave', () => {
  it('GETs /res/v1/web/search with the subscription token and strips highlight tags', async () => {
    server = await startServer((_req, res) =>
      sendJson(res, {
        type: 'search',
        web: {
          type: 'search',
          results: [
            {
              title: 'Rust',
              url: 'https://www.rust-lang.org/',
              description: 'A language empowering <strong>everyone</strong>.',
              page_age: '2025-01-10T00:00:00',
              age: 'January 10, 2025',
            },
          ],
        },
      }),
    );
    const results = await brave({ apiKey: 'brv', baseURL: server.url }).search({
      query: 'rust lang',
      num: 50,
      type: 'web',
    });
    expect(results).toEqual([
      {
        title: 'Rust',
        url: 'https://www.rust-lang.org/',
        snippet: 'A language empowering everyone.',
        date: '2025-01-10T00:00:00',
      },
    ]);
    const url = new URL(server.requests[0]?.url ?? '', server.url);
    expect(url.pathname).toBe('/res/v1/web/search');
    expect(url.searchParams.get('q')).toBe('rust lang');
    expect(url.searchParams.get('count')).toBe('20');
    expect(server.requests[0]?.headers['x-subscription-token']).toBe('brv');
  });
});

describe('tavily', () => {
  it('POSTs /search with a Bearer key and maps content to snippets', async () => {
    server = await startServer((_req, res) =>
      sendJson(res, {
        query: 'who is Leo Messi?',
        answer: null,
        results: [
          {
            title: 'Lionel Messi',
            url: 'https://en.wikipedia.org/wiki/Lionel_Messi',
            content: 'Argentine footballer.',
            score: 0.98,
            published_date: '2024-05-01',
          },
        ],
        response_time: 1.2,
      }),
    );
    const results = await tavily({ apiKey: 'tvly-1', baseURL: server.url }).search({
      query: 'who is Leo Messi?',
      num: 3,
      type: 'web',
    });
    expect(results).toEqual([
      {
        title: 'Lionel Messi',
        url: 'https://en.wikipedia.org/wiki/Lionel_Messi',
        snippet: 'Argentine footballer.',
        date: '2024-05-01',
      },
    ]);
    expect(server.requests[0]?.headers.authorization).toBe('Bearer tvly-1');
    expect(JSON.parse(server.requests[0]?.body ?? '')).toMatchObject({
      query: 'who is Leo Messi?',
      max_results: 3,
      search_depth: 'basic',
    });
  });
});

describe('searxng', () => {
  it('asks for JSON, uses the science category for scholar queries and limits locally', async () => {
    server = await startServer((_req, res) =>
      sendJson(res, {
        query: 'graph neural networks',
        number_of_results: 0,
        results: [
          {
            url: 'https://arxiv.org/abs/1',
            title: 'GNN survey',
            content: 'A survey.',
            engine: 'arxiv',
            authors: ['A', 'B', 'C', 'D'],
            journal: 'arXiv',
            publishedDate: '2020-01-01T00:00:00',
          },
          { url: 'https://arxiv.org/abs/2', title: 'Second', content: 'More.', engine: 'arxiv' },
        ],
      }),
    );
    const results = await searxng({ baseURL: server.url }).search({
      query: 'graph neural networks',
      num: 1,
      type: 'scholar',
    });
    expect(results).toEqual([
      {
        title: 'GNN survey',
        url: 'https://arxiv.org/abs/1',
        snippet: 'A survey.',
        date: '2020-01-01T00:00:00',
        source: 'A, B, C et al. - arXiv',
      },
    ]);
    const url = new URL(server.requests[0]?.url ?? '', server.url);
    expect(url.searchParams.get('format')).toBe('json');
    expect(url.searchParams.get('categories')).toBe('science');
  });
});

describe('provider HTTP errors', () => {
  it('maps 429 to a retryable rate-limited error with the Retry-After delay', async () => {
    server = await startServer((_req, res) =>
      sendJson(res, { message: 'Too many requests' }, 429, { 'retry-after': '7' }),
    );
    const error = await caught(serper({ apiKey: 'k', baseURL: server.url }).search({ query: 'q', type: 'web' }));
    expect(error.code).toBe('rate-limited');
    expect(error.retryable).toBe(true);
    expect((error as ProviderHttpError).retryAfterMs).toBe(7000);
    expect(error.message).toContain('429');
  });

  it('maps 401 to authentication, 500 to server-error and 404 to bad-request', async () => {
    const statuses = [401, 500, 404];
    server = await startServer((_req, res) => sendJson(res, { error: 'no' }, statuses.shift() ?? 200));
    const provider = brave({ apiKey: 'bad', baseURL: server.url });
    expect((await caught(provider.search({ query: 'q', type: 'web' }))).code).toBe('authentication');
    const server500 = await caught(provider.search({ query: 'q', type: 'web' }));
    expect([server500.code, server500.retryable]).toEqual(['server-error', true]);
    expect((await caught(provider.search({ query: 'q', type: 'web' }))).code).toBe('bad-request');
  });

  it('times out a provider that never answers', async () => {
    server = await startServer(() => undefined);
    const error = await caught(
      tavily({ apiKey: 'k', baseURL: server.url, timeoutMs: 200 }).search({ query: 'q', type: 'web' }),
    );
    expect(error.code).toBe('timeout');
  });

  it('reports a non-JSON body as invalid-response', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>captcha</html>');
    });
    expect((await caught(searxng({ baseURL: server.url }).search({ query: 'q', type: 'web' }))).code).toBe(
      'invalid-response',
    );
  });
});

describe('searchTool', () => {
  it('is a read-only search tool returning structured snippets', async () => {
    server = await startServer((_req, res) =>
      sendJson(res, {
        organic: [
          {
            title: 'OneDayAgent',
            link: 'https://example.org/oda',
            snippet: 'A long-horizon   harness.',
            date: '2026-08-01',
          },
          { title: 'Other', link: 'https://example.org/other', snippet: 'Second hit.' },
        ],
      }),
    );
    test = await createTestContext();
    const tool = searchTool({ provider: serper({ apiKey: 'k', baseURL: server.url }), maxResults: 4 });
    expect([tool.name, tool.readOnly, tool.observation]).toEqual(['search', true, 'search']);
    const output = await tool.execute(zodInput(tool).parse({ query: 'long horizon agents' }), test.ctx);
    expect(output).toBe(
      [
        '2 web results for "long horizon agents" (serper):',
        '',
        '1. OneDayAgent',
        '   URL: https://example.org/oda',
        '   Date: 2026-08-01',
        '   A long-horizon harness.',
        '',
        '2. Other',
        '   URL: https://example.org/other',
        '   Second hit.',
      ].join('\n'),
    );
    expect(JSON.parse(server.requests[0]?.body ?? '')).toEqual({ q: 'long horizon agents', num: 4 });
  });

  it('says so when there are no results', async () => {
    server = await startServer((_req, res) => sendJson(res, { organic: [] }));
    test = await createTestContext();
    const tool = searchTool({ provider: serper({ apiKey: 'k', baseURL: server.url }) });
    expect(await tool.execute({ query: 'zzzz' }, test.ctx)).toMatch(/^No web results for "zzzz"/);
  });

  it('rejects something that is not a provider', () => {
    expect(() => searchTool({ provider: {} as never })).toThrowError(/option "provider"/);
  });
});
