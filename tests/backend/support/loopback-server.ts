import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted answer of the loopback server. */
export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string>;
  /** Written in order; an array lets a test split bytes anywhere (mid-line, mid-UTF-8). */
  body?: string | string[];
  /** Send headers and body, then keep the response open until the client goes away. */
  hang?: boolean;
  /** Destroy the socket without an HTTP answer (a connection reset). */
  reset?: boolean;
  /** Never answer: no status line, no headers, until the client goes away. */
  stall?: boolean;
}

/** A request the server received. */
export interface RecordedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** A node:http server on 127.0.0.1 that replays scripted responses in order and records requests. */
export interface LoopbackServer {
  baseURL: string;
  requests: RecordedRequest[];
  /** Resolves when a response was closed by the client before it ended (a cancelled request). */
  cancelled: Promise<void>;
  reply(...responses: ScriptedResponse[]): void;
  close(): Promise<void>;
}

export async function startLoopbackServer(): Promise<LoopbackServer> {
  const queue: ScriptedResponse[] = [];
  const requests: RecordedRequest[] = [];
  let markCancelled!: () => void;
  const cancelled = new Promise<void>((resolve) => (markCancelled = resolve));

  const server = createServer((req, res: ServerResponse) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      requests.push({
        path: req.url ?? '',
        headers: req.headers,
        body: raw ? (JSON.parse(raw) as Record<string, unknown>) : {},
      });
      const next = queue.shift();
      if (!next) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'loopback server: no scripted response left' } }));
        return;
      }
      if (next.reset) {
        req.socket.destroy();
        return;
      }
      res.on('close', () => {
        if (!res.writableEnded) markCancelled();
      });
      if (next.stall) return;
      res.writeHead(next.status ?? 200, next.headers ?? { 'content-type': 'application/json' });
      const parts = next.body === undefined ? [] : Array.isArray(next.body) ? next.body : [next.body];
      for (const part of parts) res.write(part);
      if (!next.hang) res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    requests,
    cancelled,
    reply: (...responses) => queue.push(...responses),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Wraps JSON payloads as `data:` frames, optionally with `event:` lines named by the payload's `type`. */
export function sseBody(payloads: readonly string[], options: { done?: boolean; eventLines?: boolean } = {}): string {
  const frames = payloads.map((payload) => {
    const type = options.eventLines ? (JSON.parse(payload) as { type?: string }).type : undefined;
    return `${type ? `event: ${type}\n` : ''}data: ${payload}\n\n`;
  });
  return frames.join('') + (options.done ? 'data: [DONE]\n\n' : '');
}

export const SSE_HEADERS = { 'content-type': 'text/event-stream' };
