import { createServer } from 'node:net';
import { anthropic, type AnthropicOptions } from '../../../src/backend/anthropic.js';
import { openAICompatible, type OpenAICompatibleOptions } from '../../../src/backend/openai-compatible.js';
import type { GenerateRequest, LlmBackend, RetryNotice, StreamPart } from '../../../src/backend/types.js';
import { anthropicWire, openAIWire, type WireFormat } from './wire-formats.js';

/** Options both shipped adapters accept, as a test passes them. */
export type SharedOptions = Partial<Omit<OpenAICompatibleOptions & AnthropicOptions, 'baseURL' | 'model'>>;

/** One shipped adapter, built against a base URL the way each expects it. */
export interface AdapterCase {
  name: string;
  wire: WireFormat;
  make(
    baseURL: string,
    options?: SharedOptions,
  ): LlmBackend & { stream(request: GenerateRequest): AsyncIterable<StreamPart> };
}

export const ADAPTERS: AdapterCase[] = [
  {
    name: 'openAICompatible',
    wire: openAIWire,
    make: (baseURL, options = {}) =>
      openAICompatible({ baseURL: `${baseURL}/v1`, apiKey: 'sk-test', model: 'gpt-test', ...options }),
  },
  {
    name: 'anthropic',
    wire: anthropicWire,
    make: (baseURL, options = {}) => anthropic({ baseURL, apiKey: 'sk-ant-test', model: 'claude-test', ...options }),
  },
];

/** A loopback port nothing listens on: opened, read, closed. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A request that records every retry notice it receives. */
export function recordingRequest(): { request: GenerateRequest; notices: RetryNotice[] } {
  const notices: RetryNotice[] = [];
  return {
    notices,
    request: { messages: [{ role: 'user', content: 'Hi' }], onRetry: (notice) => notices.push(notice) },
  };
}

export async function collect(parts: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const part of parts) out.push(part);
  return out;
}
