import { afterEach, describe, expect, it } from 'vitest';
import { HarnessError } from '../../../src/errors.js';
import { googleScholarTool } from '../../../src/tools/builtin/google-scholar.js';
import { brave, searxng, serper } from '../../../src/tools/builtin/search-providers/index.js';
import { createTestContext, type TestContext } from './support/context.js';
import { sendJson, startServer, type LoopbackServer } from './support/server.js';

let server: LoopbackServer | undefined;
let test: TestContext | undefined;
afterEach(async () => {
  await server?.close();
  await test?.dispose();
  server = undefined;
  test = undefined;
});

describe('googleScholarTool', () => {
  it('queries the scholar endpoint and shows authors, venue, year and citations', async () => {
    server = await startServer((_req, res) =>
      sendJson(res, {
        organic: [
          {
            title: 'Deep residual learning for image recognition',
            link: 'https://openaccess.thecvf.com/content_cvpr_2016/html/He_Deep_Residual_Learning_CVPR_2016_paper.html',
            publicationInfo: 'K He, X Zhang, S Ren, J Sun - Proceedings of the IEEE CVPR, 2016',
            snippet: 'Deeper neural networks are more difficult to train.',
            year: 2016,
            citedBy: 200000,
          },
        ],
      }),
    );
    test = await createTestContext();
    const tool = googleScholarTool({ provider: serper({ apiKey: 'k', baseURL: server.url }) });
    expect([tool.name, tool.readOnly, tool.observation]).toEqual(['google_scholar', true, 'search']);
    const text = String(await tool.execute({ query: 'resnet', num: 3 }, test.ctx));
    expect(server.requests[0]?.url).toBe('/scholar');
    expect(text).toContain('1 scholarly results for "resnet" (serper)');
    expect(text).toContain('1. Deep residual learning for image recognition');
    expect(text).toContain('Source: K He, X Zhang, S Ren, J Sun - Proceedings of the IEEE CVPR, 2016');
    expect(text).toContain('Date: 2016');
    expect(text).toContain('Cited by: 200000');
  });

  it('works with SearXNG science results', async () => {
    server = await startServer((_req, res) =>
      sendJson(res, { results: [{ url: 'https://doi.org/10.1/x', title: 'Paper', content: 'Abstract.' }] }),
    );
    test = await createTestContext();
    const tool = googleScholarTool({ provider: searxng({ baseURL: server.url }) });
    expect(String(await tool.execute({ query: 'paper' }, test.ctx))).toContain('URL: https://doi.org/10.1/x');
  });

  it('refuses a provider without scholar support at creation', () => {
    let error: unknown;
    try {
      googleScholarTool({ provider: brave({ apiKey: 'k' }) });
    } catch (e) {
      error = e;
    }
    expect(HarnessError.isInstance(error) && error.code).toBe('invalid-options');
    expect(String(error)).toMatch(/brave.*cannot serve scholar searches/);
  });

  it('turns a 429 into a rate-limited error the registry reports', async () => {
    server = await startServer((_req, res) => sendJson(res, { message: 'slow down' }, 429));
    test = await createTestContext();
    const tool = googleScholarTool({ provider: serper({ apiKey: 'k', baseURL: server.url }) });
    await expect(tool.execute({ query: 'x' }, test.ctx)).rejects.toMatchObject({
      code: 'rate-limited',
      retryable: true,
    });
  });
});
