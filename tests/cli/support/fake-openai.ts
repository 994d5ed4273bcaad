import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ScriptedResponse } from '../../backend/support/loopback-server.js';
import { openAIWire, type ReplySpec } from '../../backend/support/wire-formats.js';

type Json = Record<string, unknown>;

/** What the fake server does with one Chat Completions request: answer it (streamed when asked), or never answer. */
export type FakeAnswer = ReplySpec | ScriptedResponse | 'stall';

/** A loopback OpenAI-compatible server whose answers are a function of each request's body. */
export interface FakeOpenAI {
  /** Ends in `/v1`, as `--base-url` takes it. */
  baseURL: string;
  requests: Json[];
  /** Resolves when the first request has arrived. */
  firstRequest: Promise<void>;
  close(): Promise<void>;
}

/** `answer` may resolve later, for a test that holds the reply until something else has happened. */
export async function startFakeOpenAI(answer: (body: Json) => FakeAnswer | Promise<FakeAnswer>): Promise<FakeOpenAI> {
  const requests: Json[] = [];
  let arrived!: () => void;
  const firstRequest = new Promise<void>((resolve) => (arrived = resolve));
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', async () => {
      const body = JSON.parse(raw) as Json;
      requests.push(body);
      arrived();
      const reply = await answer(body);
      if (reply === 'stall') return;
      const response = 'finish' in reply ? openAIWire.reply(reply, body.stream === true) : reply;
      res.writeHead(response.status ?? 200, response.headers ?? { 'content-type': 'application/json' });
      res.end(Array.isArray(response.body) ? response.body.join('') : (response.body ?? ''));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    firstRequest,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const usage = { input: 40, output: 10 };
const call = (id: string, name: string, args: unknown): ReplySpec => ({
  toolCalls: [{ id, name, args: [JSON.stringify(args)] }],
  finish: 'tool-calls',
  usage,
});

/**
 * A small, well-behaved agent, keyed by what each role's request looks like: the planner's prompt names the
 * `"subtasks"` key, the verifier's does not and neither has tools; a tool loop says `Writing hello.md.` while it
 * writes `hello.md`, then submits it with `answer` as its answer.
 */
export function helloAgent(answer = 'Wrote hello.md'): (body: Json) => ReplySpec {
  return (body) => {
    const messages = (body.messages ?? []) as Json[];
    if (Array.isArray(body.tools) && body.tools.length > 0) {
      return messages.at(-1)?.role === 'tool'
        ? call('call_submit', 'submit_answer', { answer, files: ['hello.md'] })
        : {
            ...call('call_write', 'write_to_file', { path: 'hello.md', content: '# Hello\n' }),
            text: ['Writing ', 'hello.md.'],
          };
    }
    const system = String(messages[0]?.content ?? '');
    const json = system.includes('"subtasks"')
      ? {
          subtasks: [
            { title: 'Write hello.md', objective: 'Write hello.md with a greeting.', expectedOutput: 'hello.md' },
          ],
        }
      : { passed: true, defects: [] };
    return { text: [JSON.stringify(json)], finish: 'stop', usage };
  };
}
