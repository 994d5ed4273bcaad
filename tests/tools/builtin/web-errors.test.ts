import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { HarnessError } from '../../../src/errors.js';
import { generateImageTool } from '../../../src/tools/builtin/generate-image.js';
import { googleScholarTool } from '../../../src/tools/builtin/google-scholar.js';
import { openAIImages } from '../../../src/tools/builtin/image-backend.js';
import { openAlexTool } from '../../../src/tools/builtin/openalex.js';
import { searchTool } from '../../../src/tools/builtin/search.js';
import { serper, searxng } from '../../../src/tools/builtin/search-providers/index.js';
import { visitTool } from '../../../src/tools/builtin/visit.js';
import type { Tool, ToolOutput } from '../../../src/tools/types.js';
import { makePng } from '../../workspace/support/make-files.js';
import { createTestContext, type TestContext, zodInput } from './support/context.js';
import { startServer, type LoopbackServer } from './support/server.js';

/** Every web tool against the same misbehaving loopback server: 404, 429, no answer, an endless body, binary data. */

const CAP = 64 * 1024;
const TIMEOUT = 300;

let server: LoopbackServer | undefined;
let test: TestContext | undefined;
afterEach(async () => {
  await server?.close();
  await test?.dispose();
  server = undefined;
  test = undefined;
});

type Mode = '404' | '429' | 'timeout' | 'huge' | 'binary';

interface Stream {
  written: number;
  /** True when the client hung up before the body was complete. */
  cutOff: boolean;
  /** Called when the server's response closes. */
  onClose?: () => void;
}

function newStream(): Stream & { closed: Promise<void> } {
  const stream: Stream = { written: 0, cutOff: false };
  const closed = new Promise<void>((resolve) => {
    stream.onClose = resolve;
  });
  return Object.assign(stream, { closed });
}

function serve(mode: Mode, stream: Stream) {
  return (_req: unknown, res: ServerResponse): void => {
    switch (mode) {
      case '404':
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":"Not Found"}');
        return;
      case '429':
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '2' });
        res.end('{"error":"Too Many Requests"}');
        return;
      case 'timeout':
        return;
      case 'binary':
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(makePng(8, 8));
        return;
      case 'huge': {
        // An endless body (bounded at 64 MiB so the test always ends): the client must hang up well before.
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.on('close', () => {
          stream.cutOff = !res.writableFinished;
          stream.onClose?.();
        });
        res.write('<html><head><title>Huge</title></head><body><p>The opening words of a huge page.</p>');
        const chunk = Buffer.from(`<p>${'lorem ipsum '.repeat(2_000)}</p>`);
        const pump = (): void => {
          while (stream.written < 64 * 1024 * 1024 && !res.destroyed) {
            stream.written += chunk.length;
            if (!res.write(chunk)) {
              res.once('drain', pump);
              return;
            }
          }
          if (!res.destroyed) res.end('</body></html>');
        };
        pump();
        return;
      }
    }
  };
}

interface WebTool {
  name: string;
  make(baseURL: string): Tool<any>;
  input(baseURL: string): Record<string, unknown>;
}

const TOOLS: WebTool[] = [
  {
    name: 'search (serper)',
    make: (baseURL) =>
      searchTool({ provider: serper({ apiKey: 'k', baseURL, timeoutMs: TIMEOUT, maxResponseBytes: CAP }) }),
    input: () => ({ query: 'q' }),
  },
  {
    name: 'google_scholar (searxng)',
    make: (baseURL) => googleScholarTool({ provider: searxng({ baseURL, timeoutMs: TIMEOUT, maxResponseBytes: CAP }) }),
    input: () => ({ query: 'q' }),
  },
  {
    name: 'openalex',
    make: (baseURL) => openAlexTool({ baseURL, timeoutMs: TIMEOUT, maxResponseBytes: CAP }),
    input: () => ({ entity: 'works', query: 'q' }),
  },
  {
    name: 'generate_image (openAIImages)',
    make: (baseURL) =>
      generateImageTool({
        backend: openAIImages({ baseURL, model: 'gpt-image-1', timeoutMs: TIMEOUT, maxResponseBytes: CAP }),
      }),
    input: () => ({ prompt: 'a chart', path: 'out.png' }),
  },
  {
    name: 'visit',
    make: () => visitTool({ timeoutMs: TIMEOUT, maxBytes: CAP, network: { allowPrivate: true } }),
    input: (baseURL) => ({ url: `${baseURL}/page` }),
  },
];

async function call(
  tool: WebTool,
  mode: Mode,
  stream: Stream = { written: 0, cutOff: false },
): Promise<ToolOutput | HarnessError> {
  server = await startServer(serve(mode, stream));
  test = await createTestContext();
  const built = tool.make(server.url);
  try {
    return await built.execute(zodInput(built).parse(tool.input(server.url)), test.ctx);
  } catch (error) {
    expect(HarnessError.isInstance(error), `expected a HarnessError, got ${String(error)}`).toBe(true);
    return error as HarnessError;
  }
}

function asError(outcome: ToolOutput | HarnessError): HarnessError {
  expect(HarnessError.isInstance(outcome), `expected an error, got ${JSON.stringify(outcome)}`).toBe(true);
  return outcome as HarnessError;
}

const textOf = (outcome: ToolOutput | HarnessError): string =>
  typeof outcome === 'string' ? outcome : HarnessError.isInstance(outcome) ? outcome.message : outcome.text;

describe.each(TOOLS)('$name against a misbehaving server', (tool) => {
  it('404: a bad-request error naming the status, nothing saved', async () => {
    const error = asError(await call(tool, '404'));
    expect(error.code).toBe('bad-request');
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('HTTP 404');
    expect(test?.workspace.artifacts()).toEqual([]);
  });

  it('429: a retryable rate-limited error carrying Retry-After', async () => {
    const error = asError(await call(tool, '429'));
    expect(error.code).toBe('rate-limited');
    expect(error.retryable).toBe(true);
    expect((error as HarnessError & { retryAfterMs?: number }).retryAfterMs).toBe(2_000);
    expect(error.message).toMatch(/retry after 2 s/);
  });

  it('no answer: a timeout error after the configured time', async () => {
    const error = asError(await call(tool, 'timeout'));
    expect(error.code).toBe('timeout');
    expect(error.message).toContain(`${TIMEOUT} ms`);
  });

  it('an endless body: reading stops at the cap and the connection is dropped', async () => {
    const stream = newStream();
    const outcome = await call(tool, 'huge', stream);
    if (tool.name === 'visit') {
      // A page is still useful when cut: its start is shown with a note.
      expect(textOf(outcome)).toContain('The opening words of a huge page.');
      expect(textOf(outcome)).toContain(`only the first ${CAP} bytes were read`);
    } else {
      const error = asError(outcome);
      expect(error.code).toBe('invalid-response');
      expect(error.message).toContain(`larger than ${CAP} bytes`);
    }
    // The client, not the test, must end the connection: wait (bounded) for the server to see it close.
    await Promise.race([stream.closed, new Promise((resolve) => setTimeout(resolve, 5_000))]);
    expect(stream.cutOff).toBe(true);
    expect(stream.written).toBeLessThan(64 * 1024 * 1024);
  });

  it('binary data: a clear error or description, never garbage, nothing saved', async () => {
    const outcome = await call(tool, 'binary');
    if (tool.name === 'visit') {
      expect(textOf(outcome)).toContain('binary content (image/png');
    } else {
      const error = asError(outcome);
      expect(error.code).toBe('invalid-response');
      expect(error.message).toContain('not JSON (image/png; binary data)');
    }
    expect(textOf(outcome)).not.toContain('IHDR');
    expect(test?.workspace.artifacts()).toEqual([]);
  });
});
