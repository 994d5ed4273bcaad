import { SSE_HEADERS, sseBody, type ScriptedResponse } from './loopback-server.js';

/** A provider-neutral description of one answer, rendered by a {@link WireFormat}. */
export interface ReplySpec {
  text?: string[];
  toolCalls?: Array<{ id: string; name: string; args: string[] }>;
  finish: 'stop' | 'tool-calls' | 'length';
  usage: { input: number; output: number };
}

/** How one provider says things on the wire; the conformance suite is written against this. */
export interface WireFormat {
  /** The body field that carries a request's `maxOutputTokens` for the suite's model. */
  outputLimitField: string;
  reply(spec: ReplySpec, stream: boolean): ScriptedResponse;
  /** HTTP 200 stream that sends one text delta, then reports an overloaded error. */
  errorInStream(): ScriptedResponse;
  /** HTTP 200 stream that sends one text delta ("partial ") and nothing more; tests append frames or keep it open. */
  partialStream(): ScriptedResponse & { body: string };
  /** HTTP 200 JSON body carrying an error object instead of an answer. */
  errorInBody(): ScriptedResponse;
  contextLengthError(): ScriptedResponse;
  authError(): ScriptedResponse;
  rateLimited(retryAfter: string): ScriptedResponse;
  /** The text of the tool result a sent request body gives the call `callId` (JSON text for structured content). */
  toolResultText(body: Record<string, unknown>, callId: string): string | undefined;
}

type Json = Record<string, unknown>;
const messagesOf = (body: Json) => (body.messages ?? []) as Json[];

const FINISH_OPENAI = { stop: 'stop', 'tool-calls': 'tool_calls', length: 'length' } as const;
const FINISH_ANTHROPIC = { stop: 'end_turn', 'tool-calls': 'tool_use', length: 'max_tokens' } as const;
const json = (status: number, body: unknown, headers: Record<string, string> = {}): ScriptedResponse => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

export const openAIWire: WireFormat = {
  outputLimitField: 'max_tokens',
  reply(spec, stream) {
    const usage = {
      prompt_tokens: spec.usage.input,
      completion_tokens: spec.usage.output,
      total_tokens: spec.usage.input + spec.usage.output,
    };
    if (!stream) {
      return json(200, {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: spec.text ? spec.text.join('') : null,
              ...(spec.toolCalls
                ? {
                    tool_calls: spec.toolCalls.map((c) => ({
                      id: c.id,
                      type: 'function',
                      function: { name: c.name, arguments: c.args.join('') },
                    })),
                  }
                : {}),
            },
            finish_reason: FINISH_OPENAI[spec.finish],
          },
        ],
        usage,
      });
    }
    const chunk = (delta: unknown, finish: string | null = null) =>
      JSON.stringify({
        id: 'c',
        object: 'chat.completion.chunk',
        choices: [{ index: 0, delta, finish_reason: finish }],
        usage: null,
      });
    const payloads = [chunk({ role: 'assistant', content: '' })];
    for (const t of spec.text ?? []) payloads.push(chunk({ content: t }));
    (spec.toolCalls ?? []).forEach((call, index) => {
      payloads.push(
        chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }),
      );
      for (const a of call.args) payloads.push(chunk({ tool_calls: [{ index, function: { arguments: a } }] }));
    });
    payloads.push(chunk({}, FINISH_OPENAI[spec.finish]));
    payloads.push(JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [], usage }));
    return { headers: SSE_HEADERS, body: sseBody(payloads, { done: true }) };
  },
  errorInStream: () => ({
    headers: SSE_HEADERS,
    body: sseBody([
      JSON.stringify({ choices: [{ index: 0, delta: { content: 'partial ' }, finish_reason: null }] }),
      JSON.stringify({ error: { message: 'The server is overloaded', type: 'server_error', code: 'overloaded' } }),
    ]),
  }),
  partialStream: () => ({
    headers: SSE_HEADERS,
    body: sseBody([
      JSON.stringify({
        choices: [{ index: 0, delta: { role: 'assistant', content: 'partial ' }, finish_reason: null }],
      }),
    ]),
  }),
  errorInBody: () => json(200, { error: { message: 'Model failed to produce output', type: 'invalid_request_error' } }),
  contextLengthError: () =>
    json(400, {
      error: {
        message:
          "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded',
      },
    }),
  authError: () =>
    json(401, {
      error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' },
    }),
  rateLimited: (retryAfter) =>
    json(
      429,
      { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } },
      { 'retry-after': retryAfter },
    ),
  toolResultText: (body, callId) => {
    const message = messagesOf(body).find((m) => m.role === 'tool' && m.tool_call_id === callId);
    return message === undefined ? undefined : String(message.content);
  },
};

export const anthropicWire: WireFormat = {
  outputLimitField: 'max_tokens',
  reply(spec, stream) {
    const reason = FINISH_ANTHROPIC[spec.finish];
    if (!stream) {
      return json(200, {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        content: [
          ...(spec.text ? [{ type: 'text', text: spec.text.join('') }] : []),
          ...(spec.toolCalls ?? []).map((c) => ({
            type: 'tool_use',
            id: c.id,
            name: c.name,
            input: JSON.parse(c.args.join('')) as unknown,
          })),
        ],
        stop_reason: reason,
        usage: { input_tokens: spec.usage.input, output_tokens: spec.usage.output },
      });
    }
    const events: unknown[] = [
      {
        type: 'message_start',
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          content: [],
          usage: { input_tokens: spec.usage.input, output_tokens: 1 },
        },
      },
    ];
    let index = 0;
    if (spec.text) {
      events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const t of spec.text)
        events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: t } });
      events.push({ type: 'content_block_stop', index });
      index += 1;
    }
    for (const call of spec.toolCalls ?? []) {
      events.push({
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
      });
      for (const a of call.args)
        events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: a } });
      events.push({ type: 'content_block_stop', index });
      index += 1;
    }
    events.push({
      type: 'message_delta',
      delta: { stop_reason: reason, stop_sequence: null },
      usage: { output_tokens: spec.usage.output },
    });
    events.push({ type: 'message_stop' });
    return {
      headers: SSE_HEADERS,
      body: sseBody(
        events.map((e) => JSON.stringify(e)),
        { eventLines: true },
      ),
    };
  },
  errorInStream: () => ({
    headers: SSE_HEADERS,
    body:
      sseBody(
        [
          JSON.stringify({
            type: 'message_start',
            message: { id: 'm', content: [], usage: { input_tokens: 3, output_tokens: 1 } },
          }),
          JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
          JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'partial ' } }),
        ],
        { eventLines: true },
      ) + 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
  }),
  partialStream: () => ({
    headers: SSE_HEADERS,
    body: sseBody(
      [
        JSON.stringify({
          type: 'message_start',
          message: { id: 'm', content: [], usage: { input_tokens: 3, output_tokens: 1 } },
        }),
        JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
        JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'partial ' } }),
      ],
      { eventLines: true },
    ),
  }),
  errorInBody: () =>
    json(200, { type: 'error', error: { type: 'invalid_request_error', message: 'Model failed to produce output' } }),
  contextLengthError: () =>
    json(400, {
      type: 'error',
      error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' },
    }),
  authError: () => json(401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }),
  rateLimited: (retryAfter) =>
    json(
      429,
      {
        type: 'error',
        error: { type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit' },
      },
      { 'retry-after': retryAfter },
    ),
  toolResultText: (body, callId) => {
    for (const message of messagesOf(body)) {
      if (message.role !== 'user' || !Array.isArray(message.content)) continue;
      const block = (message.content as Json[]).find((b) => b.type === 'tool_result' && b.tool_use_id === callId);
      if (block) return JSON.stringify(block.content);
    }
    return undefined;
  },
};
