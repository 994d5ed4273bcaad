import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GenerateRequest, GenerateResult, LlmBackend, Message } from '../../src/backend/types.js';
import type { EventInput } from '../../src/events.js';
import type { MemoryScope } from '../../src/memory/types.js';
import type { Tokenizer } from '../../src/memory/tokenizer.js';
import type { ToolInvocation } from '../../src/tools/types.js';
import type { Workspace } from '../../src/workspace/types.js';

/** One token per four characters: fast and predictable for arithmetic tests. */
export const quarterTokenizer: Tokenizer = { count: (text) => Math.ceil(text.length / 4) };

/** A minimal workspace over a temp dir: the memory layer only needs `root`. */
export function tempWorkspace(): Workspace & { cleanup(): void } {
  const root = mkdtempSync(join(tmpdir(), 'hh-memory-'));
  const unsupported = () => {
    throw new Error('not used by the memory tests');
  };
  return {
    root,
    resolve: unsupported,
    readFile: unsupported,
    writeFile: unsupported,
    recordArtifact: unsupported,
    artifacts: () => [],
    exists: unsupported,
    preview: unsupported,
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** A backend answering with a function of the request. */
export function fakeBackend(
  contextWindow: number,
  answer: (request: GenerateRequest) => string | Promise<string> = () => 'summary',
): LlmBackend & { calls: GenerateRequest[] } {
  const calls: GenerateRequest[] = [];
  return {
    provider: 'fake',
    modelId: 'fake-1',
    contextWindow,
    calls,
    async generate(request): Promise<GenerateResult> {
      calls.push(request);
      const content = await answer(request);
      return { message: { role: 'assistant', content, toolCalls: [] }, finishReason: 'stop', usage: { inputTokens: 0, outputTokens: 0 } };
    },
  };
}

/** A scope over a backend that records the events it receives. */
export function scopeFor(
  backend: LlmBackend,
  workspace: Workspace,
  summarizer: LlmBackend = backend,
): MemoryScope & { events: EventInput[] } {
  const events: EventInput[] = [];
  return {
    runId: 'run-1',
    purpose: 'execute',
    scope: 'subtask-1',
    backend,
    summarizer,
    workspace,
    signal: new AbortController().signal,
    emit: (event) => events.push(event),
    events,
  };
}

/** A tool invocation with the given output. */
export function invocation(text: string, observation: ToolInvocation['observation'] = 'text', callId = 'call_1'): ToolInvocation {
  return { callId, toolName: 'probe', text, files: [], images: [], isError: false, observation, durationMs: 1 };
}

/** A deterministic text of `length` characters (words from a fixed linear congruential sequence). */
export function deterministicText(seed: number, length: number): string {
  const words = ['alpha', 'beta', 'gamma', 'delta', 'context', 'window', 'token', 'memory', 'agent', 'result', '42', 'the'];
  let state = seed;
  let out = '';
  while (out.length < length) {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    out += `${words[state % words.length]}${state % 17 === 0 ? '.\n' : ' '}`;
  }
  return out.slice(0, length);
}

/** A round: an assistant message with calls and their results. */
export function round(id: string, outputs: string[]): Message[] {
  const calls = outputs.map((_, i) => ({ id: `${id}-${i}`, name: 'probe', arguments: '{}' }));
  return [
    { role: 'assistant', content: `thinking ${id}`, toolCalls: calls },
    ...outputs.map((content, i): Message => ({ role: 'tool', toolCallId: `${id}-${i}`, toolName: 'probe', content })),
  ];
}
