/**
 * The workloads of the peer benchmark, each run in a child process of its own (see `peer.ts`): importing a
 * package, and the long loop — one agent whose zero-latency fake model calls a tool N times (each call returns
 * a deterministic 20 000-character text), then answers — driven through horizon-harness's `createHarness` or
 * the Vercel AI SDK's `generateText` with tools and a stop condition.
 *
 * Every package is loaded with a dynamic `import()` inside the workload, so a child loads only what its
 * measurement needs and an import measurement starts from a bare Node process. Both loops get the same fake
 * model: the same tool calls, the same outputs, no latency; the time spent inside it is measured and
 * subtracted, so what remains is the loop's own overhead.
 * @module
 */

import type { GenerateRequest } from 'horizon-harness';

/** One long-loop configuration. */
export interface LoopConfig {
  loop: 'harness' | 'ai-sdk';
  steps: number;
  /** The harness's context window (tokens); the AI SDK's loop keeps the whole history whatever the window. */
  window: number;
  /** The harness's memory: the paper's defaults, or with observation aging. */
  memory?: 'paper' | 'aging';
  /** The harness's run store: `false` turns snapshots off (`store: false`). */
  store?: boolean;
  /** The harness's `durability` option (default `'async'`). */
  durability?: 'sync' | 'async';
  /**
   * Declare `fetch_page` as not read-only, as a tool with side effects is: each call then waits for the snapshot
   * journaling it to be stored. By default it is read-only, which a page fetch is.
   */
  sideEffects?: boolean;
  /**
   * Count the prompt tokens the loop sends, exactly, inside the fake model (the AI SDK's loop counts nothing itself;
   * the harness's `requestTokens` is an upper bound far below the window); slows the loop down.
   */
  countTokens?: boolean;
  /** The harness's event log: `false` turns it off (`eventLog: false`); by default each run writes one. */
  eventLog?: boolean;
}

/** What one long loop measured, in one process. */
export interface LoopMeasurement {
  rssBeforeLoopMb: number;
  peakRssMb: number;
  /** (wall time − time inside the fake model) / model calls. */
  overheadMsPerStep: number;
  modelCalls: number;
  promptTokens: number;
  /** Size of the measured run's event log (`.harness/events.jsonl`), in bytes; 0 without one (and for the AI SDK). */
  eventLogBytes: number;
}

/** What one import measured, in a fresh process. */
export interface ImportMeasurement {
  importMs: number;
  rssMb: number;
}

const OUTPUT_CHARS = 20_000;
/**
 * Steps of the warm-up loop: enough for a 128 K dialogue of these pages to pass the byte bound of the compression
 * threshold, so that a configuration that counts exactly at all has loaded the tokenizer's tables before the
 * measured loop (as a server has after its first run); one that never needs them (aging on 128 K) never loads them.
 */
const WARM_UP_STEPS = 20;
const TASK = 'Fetch every measurement page with fetch_page, then answer with the largest value.';
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'context', 'window', 'token', 'memory', 'agent', 'result', '42'];

const rssMb = () => process.memoryUsage().rss / 1024 / 1024;
const peakRssMb = () => process.resourceUsage().maxRSS / 1024;

/** A deterministic text: words drawn by a fixed linear congruential sequence. */
export function deterministicText(seed: number, length: number): string {
  let state = seed;
  let out = '';
  while (out.length < length) {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    out += `${WORDS[state % WORDS.length]}${state % 13 === 0 ? '.\n' : ' '}`;
  }
  return out.slice(0, length);
}

/** Imports one package by name and reports the time it took and the process's RSS afterwards. */
export async function measureImport(specifier: 'horizon-harness' | 'ai'): Promise<ImportMeasurement> {
  const started = performance.now();
  await import(specifier);
  return { importMs: performance.now() - started, rssMb: rssMb() };
}

/** The time spent inside the fake model, shared by both loops. */
class ModelClock {
  ms = 0;
  calls = 0;
  time<T>(work: () => T): T {
    const started = performance.now();
    try {
      return work();
    } finally {
      this.ms += performance.now() - started;
      this.calls++;
    }
  }
}

/** Runs a small loop first (module and JIT warm-up, the tokenizer's tables), then the measured one. */
export async function measureLoop(config: LoopConfig): Promise<LoopMeasurement> {
  const outputs = Array.from({ length: config.steps }, (_, i) => deterministicText(i + 1, OUTPUT_CHARS));
  const run = config.loop === 'harness' ? await harnessLoop(config) : await aiSdkLoop(config);
  await run({ ...config, steps: WARM_UP_STEPS, countTokens: false }, outputs, new ModelClock());
  const rssBeforeLoopMb = rssMb();
  const clock = new ModelClock();
  const started = performance.now();
  const { promptTokens, eventLogBytes } = await run(config, outputs, clock);
  const wallMs = performance.now() - started;
  return {
    rssBeforeLoopMb,
    peakRssMb: peakRssMb(),
    overheadMsPerStep: (wallMs - clock.ms) / clock.calls,
    modelCalls: clock.calls,
    promptTokens,
    eventLogBytes,
  };
}

type Loop = (
  config: LoopConfig,
  outputs: string[],
  clock: ModelClock,
) => Promise<{ promptTokens: number; eventLogBytes: number }>;

async function harnessLoop(_config: LoopConfig): Promise<Loop> {
  const { createHarness, defineTool, TokenCounter, gptTokenizer, EVENT_LOG_PATH } = await import('horizon-harness');
  const { stat } = await import('node:fs/promises');
  const { join } = await import('node:path');
  const { z } = await import('zod');
  return async (config, outputs, clock) => {
    let executeCalls = 0;
    let promptTokens = 0;
    // The harness's own counter, on what each request sent: every message tokenized once, like `promptCounter`.
    const counter = config.countTokens ? new TokenCounter(gptTokenizer()) : undefined;
    const backend = {
      provider: 'bench',
      modelId: 'zero-latency',
      contextWindow: config.window,
      generate: async (request: GenerateRequest) =>
        clock.time(() => {
          if (counter) promptTokens += counter.request(request.messages, request.tools ?? []);
          if (request.purpose === 'summarize')
            return answer('Fetched pages 1..k with fetch_page, about 20 000 characters each; next: the rest.');
          const step = executeCalls++;
          if (step < config.steps) return call(`c${step}`, 'fetch_page', { page: step });
          return call('submit', 'submit_answer', { answer: 'done', files: [] });
        }),
    };
    const fetchPage = defineTool({
      name: 'fetch_page',
      description: 'Fetches one measurement page.',
      input: z.object({ page: z.number() }),
      readOnly: config.sideEffects !== true,
      execute: ({ page }) => outputs[page] ?? '',
    });
    const harness = createHarness({
      backend,
      tools: [fetchPage],
      decomposition: false,
      verification: false,
      limits: { maxIterations: config.steps + 10 },
      ...(config.memory === 'aging' ? { memory: { observationAging: {} } } : {}),
      ...(config.store === false ? { store: false as const } : {}),
      ...(config.durability ? { durability: config.durability } : {}),
      ...(config.eventLog === false ? { eventLog: false as const } : {}),
    });
    const result = await harness.run(TASK);
    // Before close(), which removes the succeeded run's temporary workspace.
    const eventLogBytes = await stat(join(result.workspace, EVENT_LOG_PATH)).then(
      (s) => s.size,
      () => 0,
    );
    await harness.close();
    if (result.status !== 'succeeded') throw new Error(`harness loop: run ${result.status}`);
    return { promptTokens, eventLogBytes };
  };
}

function answer(content: string) {
  return {
    message: { role: 'assistant' as const, content, toolCalls: [] },
    finishReason: 'stop' as const,
    usage: { inputTokens: 0, outputTokens: 0 },
  };
}

function call(id: string, name: string, args: unknown) {
  return {
    message: { role: 'assistant' as const, content: '', toolCalls: [{ id, name, arguments: JSON.stringify(args) }] },
    finishReason: 'tool-calls' as const,
    usage: { inputTokens: 0, outputTokens: 0 },
  };
}

/** The AI SDK's loop: `generateText` with one tool, stopped by the model's text answer (or the step guard). */
async function aiSdkLoop(_config: LoopConfig): Promise<Loop> {
  const { generateText, tool, stepCountIs } = await import('ai');
  const { z } = await import('zod');
  const counter = _config.countTokens ? await promptCounter() : undefined;
  return async (config, outputs, clock) => {
    let calls = 0;
    let promptTokens = 0;
    const model = fakeAiSdkModel('zero-latency', (options) =>
      clock.time(() => {
        if (config.countTokens && counter) promptTokens += counter(options.prompt, options.tools ?? []);
        return aiSdkTurn(calls++, config.steps);
      }),
    );
    await generateText({
      model,
      prompt: TASK,
      tools: {
        fetch_page: tool({
          description: 'Fetches one measurement page.',
          inputSchema: z.object({ page: z.number() }),
          execute: async ({ page }) => outputs[page] ?? '',
        }),
      },
      stopWhen: stepCountIs(config.steps + 5),
    });
    if (calls !== config.steps + 1) throw new Error(`AI SDK loop: ${calls} model calls, expected ${config.steps + 1}`);
    return { promptTokens, eventLogBytes: 0 };
  };
}

/**
 * The fake AI SDK model's answer to call `step` (from 0) of a loop of `steps` page fetches: `fetch_page` of page
 * `step`, or the final text once every page is fetched.
 */
export function aiSdkTurn(step: number, steps: number) {
  const usage = {
    inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 0, text: 0, reasoning: 0 },
  };
  if (step < steps) {
    const input = JSON.stringify({ page: step });
    return {
      content: [{ type: 'tool-call' as const, toolCallId: `c${step}`, toolName: 'fetch_page', input }],
      finishReason: { unified: 'tool-calls' as const, raw: undefined },
      usage,
      warnings: [],
    };
  }
  return {
    content: [{ type: 'text' as const, text: 'done' }],
    finishReason: { unified: 'stop' as const, raw: undefined },
    usage,
    warnings: [],
  };
}

/** The options of a fake AI SDK model's call that the benchmarks read. */
export interface FakeCallOptions {
  prompt: unknown[];
  tools?: unknown[];
}

/** A zero-latency AI SDK model (`LanguageModelV3`, no streaming) that answers each call with `answer(options)`. */
export function fakeAiSdkModel(modelId: string, answer: (options: FakeCallOptions) => ReturnType<typeof aiSdkTurn>) {
  return {
    specificationVersion: 'v3' as const,
    provider: 'bench',
    modelId,
    supportedUrls: {},
    doGenerate: async (options: FakeCallOptions) => answer(options),
    doStream: async () => {
      throw new Error('the benchmark model does not stream');
    },
  };
}

/**
 * Counts an AI SDK prompt with the o200k tokenizer. The loop's history only grows, so each message is counted
 * once (by its position) and every request sums them: what the provider would bill.
 */
async function promptCounter(): Promise<(prompt: unknown[], tools: unknown[]) => number> {
  const { countTokens } = await import('gpt-tokenizer');
  const counted: number[] = [];
  return (prompt, tools) => {
    for (let i = counted.length; i < prompt.length; i++) counted.push(countTokens(messageText(prompt[i])));
    return counted.slice(0, prompt.length).reduce((a, b) => a + b, 0) + countTokens(JSON.stringify(tools));
  };
}

function messageText(message: unknown): string {
  const { content } = message as { content: unknown };
  if (typeof content === 'string') return content;
  return (content as Array<Record<string, unknown>>)
    .map((part) => {
      if (typeof part.text === 'string') return part.text;
      const output = part.output as { value?: unknown } | undefined;
      if (output && typeof output.value === 'string') return output.value;
      return JSON.stringify(output ?? part.input ?? '');
    })
    .join('\n');
}
