import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GenerateRequest, GenerateResult, LlmBackend, Message, Usage } from '../../src/backend/types.js';
import type { EventInput } from '../../src/events.js';
import type { MemoryScope } from '../../src/memory/types.js';
import type { Tokenizer } from '../../src/memory/tokenizer.js';
import type { ToolInvocation } from '../../src/tools/types.js';
import type { Workspace, WriteOrigin } from '../../src/workspace/types.js';

/** One token per four characters: fast and predictable for arithmetic tests. */
export const quarterTokenizer: Tokenizer = { count: (text) => Math.ceil(text.length / 4) };

/** A host's own workspace (think of a container or a remote volume): files live in memory, never under `root`. */
export interface HostWorkspace extends Workspace {
  /** Every `appendFile` call, in the order it was made. */
  readonly appends: Array<{ path: string; origin: WriteOrigin }>;
  /** When set, `appendFile` rejects with it. */
  failAppends: Error | undefined;
  /** Event-loop turns an append takes before it lands, by its 0-based index; default 0. */
  appendTurns: (index: number) => number;
  /** A file's text ('' when missing). */
  text(path: string): string;
  /** Puts a file in place, as something outside the memory would. */
  put(path: string, text: string): void;
}

/** A {@link HostWorkspace}; its `root` does not exist, so anything that bypassed the interface would fail or be missed. */
export function hostWorkspace(): HostWorkspace {
  const files = new Map<string, Buffer>();
  const unsupported = (): never => {
    throw new Error('not used by the memory tests');
  };
  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
  const workspace: HostWorkspace = {
    root: join(tmpdir(), `hh-memory-host-${randomUUID()}`),
    appends: [],
    failAppends: undefined,
    appendTurns: () => 0,
    text: (path) => files.get(path)?.toString('utf8') ?? '',
    put: (path, text) => void files.set(path, Buffer.from(text, 'utf8')),
    resolve: unsupported,
    async readFile(path) {
      const file = files.get(path);
      if (!file) throw new Error(`"${path}" does not exist in the workspace.`);
      return file;
    },
    writeFile: unsupported,
    async appendFile(path, data, origin) {
      const turns = workspace.appendTurns(workspace.appends.length);
      workspace.appends.push({ path, origin });
      for (let i = 0; i < turns; i++) await nextTurn();
      if (workspace.failAppends) throw workspace.failAppends;
      const next = Buffer.concat([files.get(path) ?? Buffer.alloc(0), Buffer.from(data)]);
      files.set(path, next);
      return { size: next.byteLength };
    },
    copyIn: unsupported,
    recordArtifact: unsupported,
    artifacts: () => [],
    exists: async (path) => files.has(path),
    preview: unsupported,
  };
  return workspace;
}

/** A backend answering with a function of the request; it reports the usage `usage` gives (default none). */
export function fakeBackend(
  contextWindow: number,
  answer: (request: GenerateRequest) => string | Promise<string> = () => 'summary',
  usage: (request: GenerateRequest) => Usage = () => ({ inputTokens: 0, outputTokens: 0 }),
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
      return { message: { role: 'assistant', content, toolCalls: [] }, finishReason: 'stop', usage: usage(request) };
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
export function invocation(
  text: string,
  observation: ToolInvocation['observation'] = 'text',
  callId = 'call_1',
): ToolInvocation {
  return { callId, toolName: 'probe', text, files: [], images: [], isError: false, observation, durationMs: 1 };
}

/** A deterministic text of `length` characters (words from a fixed linear congruential sequence). */
export function deterministicText(seed: number, length: number): string {
  const words = [
    'alpha',
    'beta',
    'gamma',
    'delta',
    'context',
    'window',
    'token',
    'memory',
    'agent',
    'result',
    '42',
    'the',
  ];
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

/** The given lines of a saved-output log, joined: what `read_file` with startLine/endLine shows the model. */
export function savedLines(workspace: HostWorkspace, path: string, lines: { start: number; end: number }): string {
  return workspace
    .text(path)
    .split('\n')
    .slice(lines.start - 1, lines.end)
    .join('\n');
}
