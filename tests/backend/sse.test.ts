import { describe, expect, it } from 'vitest';
import { parseSse, type SseFrame } from '../../src/backend/sse.js';

async function frames(...chunks: string[]): Promise<SseFrame[]> {
  const encoder = new TextEncoder();
  async function* body() {
    for (const chunk of chunks) yield encoder.encode(chunk);
  }
  const out: SseFrame[] = [];
  for await (const frame of parseSse(body())) out.push(frame);
  return out;
}

describe('parseSse', () => {
  it('reads data frames, event names and [DONE]', async () => {
    expect(await frames('event: a\ndata: {"x":1}\n\ndata: [DONE]\n\n')).toEqual([
      { event: 'a', data: '{"x":1}' },
      { event: undefined, data: '[DONE]' },
    ]);
  });

  it('joins multi-line data with newlines and skips comments and id/retry fields', async () => {
    expect(await frames(': hello\nid: 7\nretry: 100\ndata: line one\ndata: line two\n\n')).toEqual([
      { event: undefined, data: 'line one\nline two' },
    ]);
  });

  it('accepts \\r\\n and bare \\r line ends, also split between chunks', async () => {
    expect(await frames('data: a\r', '\n\r\ndata: b\r\rdata: c\r\n', '\r\n')).toEqual([
      { event: undefined, data: 'a' },
      { event: undefined, data: 'b' },
      { event: undefined, data: 'c' },
    ]);
  });

  it('treats whitespace-only lines as frame ends and tolerates indented fields and trailing spaces', async () => {
    expect(await frames('data: {"a":1}   \n   \n  data: {"b":2}\n\t\n')).toEqual([
      { event: undefined, data: '{"a":1}' },
      { event: undefined, data: '{"b":2}' },
    ]);
  });

  it('decodes UTF-8 split across chunks and emits a final frame without a blank line', async () => {
    const bytes = new TextEncoder().encode('data: 925 ÷ 5');
    const cut = bytes.indexOf(0xc3) + 1;
    async function* body() {
      yield bytes.slice(0, cut);
      yield bytes.slice(cut);
    }
    const out: SseFrame[] = [];
    for await (const frame of parseSse(body())) out.push(frame);
    expect(out).toEqual([{ event: undefined, data: '925 ÷ 5' }]);
  });
});
