import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { Dispatcher, Response } from 'undici';
import { previewFile } from '../../workspace/preview/preview-file.js';
import { defineTool } from '../define-tool.js';
import { HarnessError } from '../../errors.js';
import type { Tool, ToolContext, ToolOutput } from '../types.js';
import {
  findRefusal,
  guardedAgent,
  NetworkOptionsSchema,
  NetworkPolicy,
  type NetworkOptions,
} from './network-guard.js';
import { htmlToReadable } from './readable.js';
import { abortReason, httpError, httpFetch, joinUrl, parseOptions } from './search-providers/http.js';

/** Options of {@link visitTool}. */
export interface VisitToolOptions {
  /**
   * `builtin` fetches the page and extracts readable text locally; `jina` asks the Jina reader
   * (`GET https://r.jina.ai/<url>`) for markdown, as the paper does.
   * @defaultValue 'builtin'
   */
  reader?: 'builtin' | 'jina';
  /** Jina reader API key (optional; raises its rate limit). */
  jinaApiKey?: string;
  /** @defaultValue 'https://r.jina.ai' */
  jinaBaseURL?: string;
  /**
   * undici dispatcher (Agent, ProxyAgent, MockAgent) used for every request. By default visit uses its own Agent that
   * checks every connection against `network`; with your own dispatcher only the URL checks apply (host names, the
   * host lists, IP literals), since what a name resolves to is then up to the dispatcher (a proxy must enforce it).
   */
  dispatcher?: Dispatcher;
  /**
   * What the model's URLs may reach. By default loopback, private, link-local, CGNAT and unique-local addresses,
   * special-purpose ranges and cloud metadata services are refused, also as redirect targets and when a name resolves
   * to them. `allowHosts` limits visits to listed hosts (the way to stop a model sending data out in a URL).
   */
  network?: NetworkOptions;
  /**
   * Time for the whole fetch, body included, in milliseconds.
   * @defaultValue 30000
   */
  timeoutMs?: number;
  /**
   * Largest body read; a longer body is cut off (text) or refused (PDF, binary).
   * @defaultValue 10485760 (10 MiB)
   */
  maxBytes?: number;
  /** @defaultValue 5 */
  maxRedirects?: number;
  /** @defaultValue 'Mozilla/5.0 (compatible; horizon-harness)' */
  userAgent?: string;
}

const VisitOptionsSchema = z.strictObject({
  reader: z.enum(['builtin', 'jina']).default('builtin'),
  jinaApiKey: z.string().min(1).optional(),
  jinaBaseURL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).default('https://r.jina.ai'),
  dispatcher: z
    .custom<Dispatcher>((value) => typeof value === 'object' && value !== null, 'must be an undici Dispatcher')
    .optional(),
  timeoutMs: z.number().int().min(1).max(600_000).default(30_000),
  maxBytes: z
    .number()
    .int()
    .min(1_024)
    .max(1_073_741_824)
    .default(10 * 1024 * 1024),
  maxRedirects: z.number().int().min(0).max(20).default(5),
  userAgent: z.string().min(1).default('Mozilla/5.0 (compatible; horizon-harness)'),
  network: NetworkOptionsSchema.prefault({}),
});
type ResolvedVisitOptions = z.output<typeof VisitOptionsSchema> & {
  /** Checks every URL, redirect targets included, before it is requested. */
  policy: NetworkPolicy;
  /**
   * The dispatcher of page fetches: the caller's, else an Agent that checks every connection against the policy,
   * made on the first fetch.
   */
  pageDispatcher: () => Promise<Dispatcher>;
};

const VisitInput = z.object({
  url: z.string().trim().min(1).describe('The http(s) URL to read.'),
});

interface Body {
  bytes: Buffer;
  truncated: boolean;
}

/** Reads a body up to `maxBytes`, cancelling the stream as soon as the cap is passed. */
async function readCapped(stream: Response['body'], maxBytes: number): Promise<Body> {
  if (!stream) return { bytes: Buffer.alloc(0), truncated: false };
  const reader = stream.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = (await reader.read()) as { done: boolean; value: Uint8Array };
    if (done) return { bytes: Buffer.concat(chunks), truncated: false };
    if (size + value.byteLength > maxBytes) {
      chunks.push(Buffer.from(value.subarray(0, maxBytes - size)));
      await reader.cancel().catch(() => undefined);
      return { bytes: Buffer.concat(chunks), truncated: true };
    }
    chunks.push(Buffer.from(value));
    size += value.byteLength;
  }
}

function checkUrl(raw: string, label = 'URL'): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new HarnessError('invalid-input', `visit: "${raw}" is not a valid URL; give an absolute http(s) URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new HarnessError(
      'invalid-input',
      `visit: the ${label} ${url.href} uses ${url.protocol}; only http and https URLs can be visited.`,
    );
  }
  return url;
}

type Kind = 'html' | 'text' | 'pdf' | 'binary';

function classify(contentType: string, bytes: Buffer, url: URL): Kind {
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'application/pdf' || bytes.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  if (
    type.startsWith('text/') ||
    type === 'application/json' ||
    type.endsWith('+json') ||
    type.endsWith('+xml') ||
    type === 'application/xml' ||
    type === 'application/javascript' ||
    type === 'application/x-ndjson'
  ) {
    return 'text';
  }
  if (type === '' || type === 'application/octet-stream') {
    const head = bytes.subarray(0, 1_024).toString('latin1').trimStart().toLowerCase();
    if (head.startsWith('<!doctype html') || head.startsWith('<html')) return 'html';
    if (!bytes.subarray(0, 8_192).includes(0) && isUtf8(bytes.subarray(0, 8_192))) return 'text';
    if (url.pathname.toLowerCase().endsWith('.pdf')) return 'pdf';
  }
  return 'binary';
}

function isUtf8(bytes: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch (error) {
    // A multi-byte character cut at the sample's end is still UTF-8.
    return bytes.length >= 8_192 && error instanceof TypeError && isUtf8(bytes.subarray(0, bytes.length - 3));
  }
}

/**
 * Decodes a page: the header's charset wins; without one, valid UTF-8 is taken as UTF-8 (pages often keep a stale
 * `<meta charset>`), else the meta charset, else windows-1252.
 */
function decode(bytes: Buffer, contentType: string, truncated: boolean): string {
  const declared = /charset\s*=\s*"?([\w-]+)/i.exec(contentType)?.[1];
  const tryDecode = (label: string, fatal: boolean): string | undefined => {
    try {
      return new TextDecoder(label, { fatal }).decode(bytes);
    } catch {
      return undefined;
    }
  };
  if (declared) {
    const text = tryDecode(declared, false);
    if (text !== undefined) return text;
  }
  const utf8 = tryDecode('utf-8', !truncated);
  if (utf8 !== undefined) return utf8;
  const meta = /<meta[^>]+charset\s*=\s*["']?([\w-]+)/i.exec(bytes.subarray(0, 4_096).toString('latin1'))?.[1];
  return (meta ? tryDecode(meta, false) : undefined) ?? new TextDecoder('windows-1252').decode(bytes);
}

function downloadName(url: URL): string {
  const last = decodeURIComponent(url.pathname.split('/').filter(Boolean).pop() ?? '');
  const base =
    last
      .replace(/\.pdf$/i, '')
      .replace(/[^\w.-]+/g, '-')
      .replace(/^[-.]+/, '')
      .slice(0, 80) || url.hostname.replace(/[^\w.-]+/g, '-');
  return `${base}.pdf`;
}

/** Previews a PDF from a private temporary copy, leaving the workspace untouched. */
async function previewPdfOutside(bytes: Buffer, url: URL): Promise<string> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'horizon-visit-'));
  try {
    const file = path.join(directory, downloadName(url));
    await writeFile(file, bytes);
    const preview = await previewFile(file, { displayName: url.href });
    return `URL: ${url.href}\nPDF document (${bytes.length} bytes), not saved: an audit never changes the workspace.\n\n${preview}`;
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

async function savePdf(bytes: Buffer, url: URL, ctx: ToolContext): Promise<ToolOutput> {
  // visit is a read-only tool: the managed mode's auditor uses it, and any workspace change during an audit is an
  // integrity violation, so there the PDF is only previewed.
  if (ctx.purpose === 'audit') return previewPdfOutside(bytes, url);
  const name = downloadName(url);
  let target = `downloads/${name}`;
  for (let n = 2; await ctx.workspace.exists(target); n += 1)
    target = `downloads/${name.replace(/\.pdf$/, '')}-${n}.pdf`;
  await ctx.workspace.writeFile(target, bytes, { tool: 'visit', scope: ctx.scope });
  const preview = await ctx.workspace.preview(target);
  return {
    text: `URL: ${url.href}\nPDF document (${bytes.length} bytes) saved as ${target}; use read_file for more.\n\n${preview}`,
    files: [target],
  };
}

async function fetchPage(url: URL, opts: ResolvedVisitOptions, ctx: ToolContext): Promise<ToolOutput> {
  let current = url;
  for (let redirects = 0; ; redirects += 1) {
    const { response, signal, done } = await httpFetch(current.href, {
      headers: {
        'user-agent': opts.userAgent,
        accept: 'text/html,application/xhtml+xml,application/pdf,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5',
      },
      dispatcher: await opts.pageDispatcher(),
      timeoutMs: opts.timeoutMs,
      signal: ctx.signal,
      redirect: 'manual',
      label: 'visit',
    }).catch((error: unknown) => {
      // A connection the guard refused surfaces as a connection error; the model should see the refusal itself.
      throw findRefusal(error) ?? error;
    });
    try {
      if (response.status >= 300 && response.status < 400 && response.headers.has('location')) {
        await response.body?.cancel().catch(() => undefined);
        if (redirects >= opts.maxRedirects) {
          throw new HarnessError(
            'bad-request',
            `visit: ${url.href} redirected more than ${opts.maxRedirects} times; stopped.`,
          );
        }
        current = checkUrl(new URL(response.headers.get('location') ?? '', current).href, 'redirect target');
        opts.policy.checkUrl(current);
        continue;
      }
      if (!response.ok) {
        const error = await httpError(`visit ${current.href}`, response);
        throw error;
      }
      const contentType = response.headers.get('content-type') ?? '';
      const declaredLength = Number(response.headers.get('content-length') ?? NaN);
      const pdfLike = /application\/pdf/i.test(contentType);
      if (pdfLike && declaredLength > opts.maxBytes) {
        await response.body?.cancel().catch(() => undefined);
        return `URL: ${current.href}\nThe PDF is ${declaredLength} bytes, above the ${opts.maxBytes}-byte limit; it was not downloaded.`;
      }
      const body = await readCapped(response.body, opts.maxBytes);
      return render(current, contentType, body, opts, ctx);
    } catch (error) {
      throw abortReason(signal, 'visit') ?? error;
    } finally {
      done();
    }
  }
}

async function render(
  url: URL,
  contentType: string,
  body: Body,
  opts: ResolvedVisitOptions,
  ctx: ToolContext,
): Promise<ToolOutput> {
  const kind = classify(contentType, body.bytes, url);
  const note = body.truncated
    ? `\n\n[The page is larger than ${opts.maxBytes} bytes; only the first ${opts.maxBytes} bytes were read.]`
    : '';
  if (kind === 'pdf') {
    if (body.truncated) {
      return `URL: ${url.href}\nThe PDF is larger than the ${opts.maxBytes}-byte limit; it was not saved.`;
    }
    return savePdf(body.bytes, url, ctx);
  }
  if (kind === 'binary') {
    const type = contentType.split(';')[0]?.trim() || 'unknown type';
    return `URL: ${url.href}\nThe URL returned binary content (${type}, ${body.truncated ? `more than ${opts.maxBytes}` : body.bytes.length} bytes) that cannot be shown as text; nothing was saved.`;
  }
  const decoded = decode(body.bytes, contentType, body.truncated);
  if (kind === 'text') return `URL: ${url.href}\nContent-Type: ${contentType || 'text/plain'}\n\n${decoded}${note}`;
  const page = await htmlToReadable(decoded, url.href);
  const meta = [page.byline ? `Byline: ${page.byline}` : '', page.siteName ? `Site: ${page.siteName}` : ''].filter(
    Boolean,
  );
  const text = page.text || '(The page has no readable text; it may need JavaScript to render.)';
  return [`URL: ${url.href}`, `Title: ${page.title}`, ...meta, '', `${text}${note}`].join('\n');
}

async function fetchJina(url: URL, opts: ResolvedVisitOptions, ctx: ToolContext): Promise<string> {
  const headers: Record<string, string> = { accept: 'text/plain', 'x-return-format': 'markdown' };
  if (opts.jinaApiKey) headers.authorization = `Bearer ${opts.jinaApiKey}`;
  const { response, signal, done } = await httpFetch(joinUrl(opts.jinaBaseURL, url.href), {
    headers,
    dispatcher: opts.dispatcher,
    timeoutMs: opts.timeoutMs,
    signal: ctx.signal,
    label: 'visit (jina reader)',
  });
  try {
    if (!response.ok) throw await httpError(`visit (jina reader) ${url.href}`, response);
    const body = await readCapped(response.body, opts.maxBytes);
    const note = body.truncated
      ? `\n\n[The page is larger than ${opts.maxBytes} bytes; only the first ${opts.maxBytes} bytes were read.]`
      : '';
    return `URL: ${url.href}\n\n${body.bytes.toString('utf8')}${note}`;
  } catch (error) {
    throw abortReason(signal, 'visit (jina reader)') ?? error;
  } finally {
    done();
  }
}

/**
 * The paper's `visit` tool: fetches an http(s) URL with undici (timeout, streamed size cap, bounded redirects) and
 * returns readable text: HTML through Readability, text and JSON as they are, PDFs saved to `downloads/` and
 * previewed (in an audit, purpose `audit`, only previewed: the tool is read-only). With `reader: 'jina'` the Jina reader returns the page as markdown.
 * Private networks and cloud metadata services are refused unless `network` opens them; a refusal is a
 * `policy-denied` HarnessError, which the model sees as an error observation.
 *
 * @example
 * ```ts
 * const visit = visitTool({ timeoutMs: 20_000, maxBytes: 5 * 1024 * 1024 });
 * const docsOnly = visitTool({ network: { allowHosts: ['docs.python.org', '*.wikipedia.org'] } });
 * ```
 */
export function visitTool(options: VisitToolOptions = {}): Tool<z.output<typeof VisitInput>> {
  const parsed = parseOptions(VisitOptionsSchema, options, 'visitTool');
  const policy = new NetworkPolicy(parsed.network, 'visit');
  let guarded: Promise<Dispatcher> | undefined;
  const pageDispatcher = (): Promise<Dispatcher> => {
    guarded ??= parsed.dispatcher ? Promise.resolve(parsed.dispatcher) : guardedAgent(policy);
    return guarded;
  };
  const opts: ResolvedVisitOptions = { ...parsed, policy, pageDispatcher };
  return defineTool({
    name: 'visit',
    description:
      'Read a web page or document by URL (http/https). Returns the title and readable text; PDFs are saved to downloads/ and previewed.',
    input: VisitInput,
    readOnly: true,
    observation: 'visit',
    // The tool's own timeout reports first; the registry's is only a backstop.
    timeoutMs: opts.timeoutMs * (opts.maxRedirects + 1) + 5_000,
    execute: async ({ url }, ctx) => {
      const target = checkUrl(url);
      // Also with the Jina reader: the model's URL is fetched for it, and the host lists must still hold.
      opts.policy.checkUrl(target);
      return opts.reader === 'jina' ? fetchJina(target, opts, ctx) : fetchPage(target, opts, ctx);
    },
  });
}
