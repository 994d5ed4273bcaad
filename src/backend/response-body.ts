/**
 * What a 2xx body turned out to be: an event stream (whatever was asked for), a JSON document, or something to
 * describe in an error. Servers that ignore `stream: true`, proxies that answer with an HTML page and bodies cut off
 * mid-way all reach the adapters here.
 * @module
 * @internal
 */
import { HarnessError } from '../errors.js';
import { bodyBytes, type OpenResponse } from './http.js';
import type { ErrorContext } from './http-errors.js';

/** A 2xx body: SSE bytes to parse as they arrive, or a parsed JSON document. @internal */
export type AnswerBody = { kind: 'sse'; bytes: AsyncIterable<Uint8Array> } | { kind: 'json'; value: unknown };

/** How an event stream begins: a field name and a colon, or a `:` comment. */
const SSE_START = /^(?:(?:data|event|id|retry)[ \t]*:|:)/;

/** Characters of an unexpected body quoted in the error. */
const PREVIEW_CHARS = 200;

/**
 * Reads up to the first non-blank byte and decides: a body starting with `{` or `[` is read whole and parsed as JSON;
 * one that starts like SSE (or is declared `text/event-stream`) is handed on as a stream; anything else is read whole
 * and reported. A body that is not what it claims is a retryable `invalid-response`: proxies and overloaded servers
 * send such pages now and then.
 * @internal
 */
export async function readAnswerBody(open: OpenResponse, errors: ErrorContext): Promise<AnswerBody> {
  const iterator = bodyBytes(open)[Symbol.asyncIterator]();
  const decoder = new TextDecoder();
  const head: Uint8Array[] = [];
  let text = '';
  let ended = false;
  while (!ended && text.trim() === '') {
    const next = await iterator.next();
    if (next.done) ended = true;
    else {
      head.push(next.value);
      text += decoder.decode(next.value, { stream: true });
    }
  }
  const start = text.trimStart();
  const contentType = open.response.headers.get('content-type') ?? '';
  const looksJson = start.startsWith('{') || start.startsWith('[');
  if (!looksJson && start !== '' && (SSE_START.test(start) || /event-stream/i.test(contentType))) {
    return { kind: 'sse', bytes: replay(head, iterator) };
  }
  for (let next = ended ? undefined : await iterator.next(); next && !next.done; next = await iterator.next()) {
    text += decoder.decode(next.value, { stream: true });
  }
  text += decoder.decode();
  const what = `HTTP ${open.response.status} (${contentType === '' ? 'no content-type' : `content-type ${contentType}`})`;
  if (looksJson) {
    try {
      return { kind: 'json', value: JSON.parse(text) as unknown };
    } catch (error) {
      throw new HarnessError(
        'invalid-response',
        `${errors.provider} answered ${what} with JSON that does not parse, likely cut off: "${preview(text)}".`,
        {
          retryable: true,
          cause: error,
        },
      );
    }
  }
  throw new HarnessError(
    'invalid-response',
    `${errors.provider} answered ${what} with ${text.trim() === '' ? 'an empty body' : `"${preview(text)}"`}, which is neither an event stream nor a JSON completion. A proxy or gateway may have answered instead of the model server; check the \`baseURL\` option if this persists.`,
    { retryable: true },
  );
}

/** The start of a body on one line. */
function preview(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > PREVIEW_CHARS ? `${flat.slice(0, PREVIEW_CHARS)}…` : flat;
}

/** The chunks already read, then the rest; stopping early frees the request (the iterator's `finally`). */
async function* replay(head: Uint8Array[], rest: AsyncIterator<Uint8Array>): AsyncGenerator<Uint8Array> {
  try {
    yield* head;
    for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
  } finally {
    await rest.return?.();
  }
}
