/**
 * A Server-Sent Events parser shared by the HTTP adapters.
 * @module
 * @internal
 */

/** One SSE frame: its `event:` name (when the server sent one) and its joined `data:` lines. */
export interface SseFrame {
  event: string | undefined;
  data: string;
}

/**
 * Splits a byte stream into SSE frames. Accepts `\n`, `\r\n` and `\r` line ends, lines padded with
 * whitespace (some proxies send them), `:` comments, multi-line `data:` and a final frame without a
 * trailing blank line. `[DONE]` is returned as an ordinary frame; callers decide what it means.
 * @internal
 */
export async function* parseSse(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseFrame> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event: string | undefined;
  let data: string[] = [];

  function* takeLine(rawLine: string): Generator<SseFrame> {
    // A whitespace-only line ends a frame just like an empty one: padded keep-alive lines must not glue frames together.
    const line = rawLine.replace(/^[ \t]+(?=\S)/, '');
    if (line.trim() === '') {
      if (data.length > 0) yield { event, data: data.join('\n') };
      event = undefined;
      data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value.replace(/[ \t]+$/, ''));
    else if (field === 'event') event = value.trim();
    // `id:` and `retry:` carry nothing the adapters use.
  }

  for await (const chunk of body) {
    buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let match: RegExpExecArray | null;
    const lineEnd = /\r\n|\r|\n/g;
    let start = 0;
    // biome-ignore lint/suspicious/noAssignInExpressions: the usual RegExp.exec loop
    while ((match = lineEnd.exec(buffer)) !== null) {
      // A lone `\r` at the end of the buffer may be the first half of `\r\n`; wait for more bytes.
      if (match[0] === '\r' && match.index === buffer.length - 1) break;
      yield* takeLine(buffer.slice(start, match.index));
      start = match.index + match[0].length;
    }
    buffer = buffer.slice(start);
  }
  buffer += decoder.decode();
  if (buffer.length > 0) yield* takeLine(buffer.replace(/\r$/, ''));
  yield* takeLine('');
}
