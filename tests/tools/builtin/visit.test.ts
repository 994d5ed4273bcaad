import { readdirSync, readFileSync } from 'node:fs';
import { parseHTML } from 'linkedom';
import { afterEach, describe, expect, it } from 'vitest';
import { HarnessError } from '../../../src/errors.js';
import { visitTool } from '../../../src/tools/builtin/visit.js';
import type { ToolOutput } from '../../../src/tools/types.js';
import { fixturePath, readFixture } from '../../support/fixtures.js';
import { createTestContext, type TestContext, zodInput } from './support/context.js';
import { tinyPdf } from './support/pdf.js';
import { startServer, type LoopbackServer } from './support/server.js';

let server: LoopbackServer | undefined;
let test: TestContext | undefined;
afterEach(async () => {
  await server?.close();
  await test?.dispose();
  server = undefined;
  test = undefined;
});

const textOf = (output: ToolOutput): string => (typeof output === 'string' ? output : output.text);
const norm = (s: string): string => s.replace(/\s+/g, ' ').trim();

/** These tests read pages from a loopback server, which visit refuses unless the application opts in. */
const LOOPBACK = { network: { allowPrivate: true } };

async function visit(url: string, options: Parameters<typeof visitTool>[0] = {}): Promise<ToolOutput> {
  test ??= await createTestContext();
  const tool = visitTool({ ...LOOPBACK, ...options });
  return tool.execute(zodInput(tool).parse({ url }), test.ctx);
}

async function failure(promise: Promise<unknown>): Promise<HarnessError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(HarnessError.isInstance(error), `expected a HarnessError, got ${String(error)}`).toBe(true);
  return error as HarnessError;
}

/** Page chrome that must not reach the model. */
const BOILERPLATE: Record<string, string[]> = {
  wikipedia: ['Navigation menu', 'Personal tools', 'This page was last modified'],
  'v8-blog': ['Show navigation', 'Retweet this article'],
  'lemonde-1': ['En poursuivant votre navigation sur ce site'],
  'mozilla-1': ['For desktops & laptops Overview'],
  qq: ['.nav-Article-QQ'],
};

const PAGES = readdirSync(fixturePath('web'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

describe('visit on recorded pages', () => {
  it.each(PAGES)('%s: title, first and last paragraph of the article, no chrome', async (name) => {
    const html = readFileSync(fixturePath('web', name, 'source.html'));
    // The qq page declares gb2312 in a meta tag but is UTF-8; it is served without a charset to exercise sniffing.
    const type = name === 'qq' ? 'text/html' : 'text/html; charset=utf-8';
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': type });
      res.end(html);
    });
    const text = textOf(await visit(`${server.url}/${name}/index.html`));
    const meta = JSON.parse(readFixture('web', name, 'expected-metadata.json')) as { title: string };
    expect(text.split('\n')[1]).toBe(`Title: ${meta.title}`);

    const expected = parseHTML(`<html><body>${readFixture('web', name, 'expected.html')}</body></html>`).document;
    const paragraphs = Array.from(expected.querySelectorAll('p, pre'))
      .map((p) => norm((p as { textContent: string | null }).textContent ?? ''))
      .filter((p) => p.length >= 30);
    expect(paragraphs.length).toBeGreaterThan(0);
    const flat = norm(text);
    expect(flat).toContain((paragraphs[0] as string).slice(0, 60));
    expect(flat).toContain((paragraphs.at(-1) as string).slice(0, 60));
    for (const chrome of BOILERPLATE[name] ?? []) expect(flat).not.toContain(chrome);
    expect(text).not.toMatch(/<\/?(script|div|p|span)\b/i);
  });
});

describe('visit content types', () => {
  it('returns text/plain and JSON as text', async () => {
    server = await startServer((req, res) => {
      if (req.url === '/data.json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"answer":42}');
      } else {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('plain words\nsecond line');
      }
    });
    expect(textOf(await visit(`${server.url}/notes.txt`))).toContain('plain words\nsecond line');
    expect(textOf(await visit(`${server.url}/data.json`))).toContain('{"answer":42}');
  });

  it('decodes with the charset of the Content-Type header', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=windows-1252' });
      res.end(Buffer.from('caf\xe9 cr\xe8me', 'latin1'));
    });
    expect(textOf(await visit(`${server.url}/menu.txt`))).toContain('café crème');
  });

  it('saves a PDF under downloads/ and shows its preview', async () => {
    const pdf = tinyPdf('Quarterly revenue grew 12 percent');
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(pdf.length) });
      res.end(pdf);
    });
    const output = await visit(`${server.url}/files/report.pdf?x=1`);
    expect(typeof output).toBe('object');
    const { text, files } = output as { text: string; files: string[] };
    expect(files).toEqual(['downloads/report.pdf']);
    expect(text).toContain('saved as downloads/report.pdf');
    expect(text).toContain('Quarterly revenue grew 12 percent');
    expect((await test?.workspace.readFile('downloads/report.pdf'))?.equals(pdf)).toBe(true);
    expect(test?.workspace.artifacts().map((a) => [a.path, a.tool])).toEqual([['downloads/report.pdf', 'visit']]);
    const again = (await visit(`${server.url}/files/report.pdf`)) as { files: string[] };
    expect(again.files).toEqual(['downloads/report-2.pdf']);
  });

  it('in an audit (purpose "audit") previews a PDF without changing the workspace, as a read-only tool must', async () => {
    const pdf = tinyPdf('Audited revenue figures');
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/pdf' });
      res.end(pdf);
    });
    test = await createTestContext();
    const tool = visitTool(LOOPBACK);
    expect(tool.readOnly).toBe(true);
    const output = await tool.execute({ url: `${server.url}/files/audit.pdf` }, { ...test.ctx, purpose: 'audit' });
    expect(typeof output).toBe('string');
    expect(output as string).toContain('not saved: an audit never changes the workspace');
    expect(output as string).toContain('Audited revenue figures');
    expect(test.workspace.artifacts()).toEqual([]);
    expect(await test.workspace.exists('downloads')).toBe(false);
  });

  it('describes other binaries instead of returning garbage, and saves nothing', async () => {
    const png = Buffer.from([
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0xff, 0x00,
    ]);
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(png);
    });
    const text = textOf(await visit(`${server.url}/logo.png`));
    expect(text).toContain(`binary content (image/png, ${png.length} bytes)`);
    expect(text).not.toContain('PNG');
    expect(test?.workspace.artifacts()).toEqual([]);
  });

  it('sniffs untyped HTML', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end('<!DOCTYPE html><html><head><title>Sniffed</title></head><body><p>Body text here.</p></body></html>');
    });
    const text = textOf(await visit(`${server.url}/x`));
    expect(text).toContain('Title: Sniffed');
    expect(text).toContain('Body text here.');
  });
});

describe('visit limits and errors', () => {
  it('stops reading a page beyond the size cap and says so', async () => {
    const chunk = Buffer.from(`<p>${'filler text '.repeat(5_000)}</p>`);
    let written = 0;
    let closedEarly = false;
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.write(
        '<html><head><title>Huge</title></head><body><article><h1>Huge</h1><p>The opening paragraph of a very large page.</p>',
      );
      res.on('close', () => {
        closedEarly = !res.writableFinished;
      });
      const pump = (): void => {
        while (written < 200 * 1024 * 1024 && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end('</article></body></html>');
      };
      pump();
    });
    const text = textOf(await visit(`${server.url}/huge`, { maxBytes: 256 * 1024 }));
    expect(text).toContain('The opening paragraph of a very large page.');
    expect(text).toContain(`only the first ${256 * 1024} bytes were read`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closedEarly).toBe(true);
    expect(written).toBeLessThan(200 * 1024 * 1024);
  });

  it('reports 404 as a bad-request error with the status', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('Not Found');
    });
    const error = await failure(visit(`${server.url}/missing`));
    expect(error.code).toBe('bad-request');
    expect(error.message).toContain('HTTP 404');
  });

  it('times out a server that stops sending', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<html><body><p>start');
    });
    const error = await failure(visit(`${server.url}/slow`, { timeoutMs: 300 }));
    expect(error.code).toBe('timeout');
    expect(error.message).toContain('300 ms');
  });

  it('follows redirects up to the limit', async () => {
    server = await startServer((req, res) => {
      const hop = Number(/\/hop\/(\d+)/.exec(req.url)?.[1] ?? 0);
      if (hop > 0) {
        res.writeHead(302, { location: `/hop/${hop - 1}` });
        res.end();
      } else {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('arrived');
      }
    });
    const text = textOf(await visit(`${server.url}/hop/2`, { maxRedirects: 2 }));
    expect(text).toContain(`URL: ${server.url}/hop/0`);
    expect(text).toContain('arrived');
    const error = await failure(visit(`${server.url}/hop/3`, { maxRedirects: 2 }));
    expect(error.message).toContain('redirected more than 2 times');
  });

  it('refuses non-http URLs, also as redirect targets', async () => {
    expect((await failure(visit('file:///etc/passwd'))).code).toBe('invalid-input');
    expect((await failure(visit('not a url'))).code).toBe('invalid-input');
    server = await startServer((_req, res) => {
      res.writeHead(301, { location: 'file:///etc/passwd' });
      res.end();
    });
    const error = await failure(visit(`${server.url}/evil`));
    expect(error.code).toBe('invalid-input');
    expect(error.message).toContain('only http and https');
  });

  it('is aborted with the run', async () => {
    server = await startServer(() => undefined);
    test = await createTestContext();
    const promise = visit(`${server.url}/never`);
    test.abort.abort();
    expect((await failure(promise)).code).toBe('aborted');
  });
});

describe('visit with the Jina reader', () => {
  it('GETs <jinaBaseURL>/<url> with the key and returns the markdown', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(
        'Title: Example Domain\n\nURL Source: https://example.com/\n\nMarkdown Content:\n# Example Domain\n\nThis domain is for use in examples.',
      );
    });
    const text = textOf(
      await visit('https://example.com/', { reader: 'jina', jinaBaseURL: server.url, jinaApiKey: 'jina_x' }),
    );
    expect(server.requests[0]?.url).toBe('/https://example.com/');
    expect(server.requests[0]?.headers.authorization).toBe('Bearer jina_x');
    expect(text).toContain('# Example Domain');
    expect(text).toContain('This domain is for use in examples.');
  });
});

describe('visitTool options', () => {
  it('is read-only with the visit observation', () => {
    const tool = visitTool();
    expect([tool.name, tool.readOnly, tool.observation]).toEqual(['visit', true, 'visit']);
  });

  it('rejects a bad option naming it', () => {
    expect(() => visitTool({ maxRedirects: -1 })).toThrowError(/visitTool: option "maxRedirects"/);
  });
});
