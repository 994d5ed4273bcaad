/**
 * The long-loop benchmark of issue 4: one subtask whose model calls a tool N times, each call returning a
 * deterministic 20 000-character text, then answers. Zero-latency backend; windows 128 000 and 32 000;
 * the memory layer with the paper's defaults, with observation aging, and a naive loop that keeps the
 * whole history (what peer frameworks do), counted with the same tokenizer. Σ prompt tokens and the peak request
 * are counted exactly inside the fake backend, from the messages each request sent; that counting is not part of
 * ms per step.
 *
 * Each configuration runs in its own child process (so peak RSS is its own), three times; ms per step
 * is the median of the three runs. The children run this file compiled to plain JavaScript, as users run
 * the library: no TypeScript loader sits in the process whose time and memory are measured.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type {
  GenerateRequest,
  GenerateResult,
  LlmBackend,
  Message,
  StreamPart,
  ToolSpec,
} from '../src/backend/types.js';
import type { EventInput } from '../src/events.js';
import { Executor } from '../src/executor/executor.js';
import {
  MemoryManager,
  TokenCounter,
  gptTokenizer,
  type MemoryManagerOptions,
  warmUpTokenizer,
} from '../src/memory/index.js';
import type { ExecutionMemory, PendingRequest } from '../src/memory/types.js';
import { DataMark } from '../src/prompts/datamark.js';
import { defineTool } from '../src/tools/define-tool.js';
import { ToolRegistry } from '../src/tools/registry.js';
import type { ToolInvocation } from '../src/tools/types.js';
import { LocalWorkspace } from '../src/workspace/local-workspace.js';

/** One benchmark configuration. */
export interface Configuration {
  mode: 'naive' | 'paper' | 'aging';
  steps: number;
  window: number;
  /** `stream`: the backend also has `stream()`, so every call goes through it and emits delta events. */
  transport?: 'generate' | 'stream';
}

/** What one configuration measured. */
export interface Measurement extends Configuration {
  promptTokens: number;
  peakRequestTokens: number;
  msPerStep: number;
  peakRssMb: number;
  /** RSS after loading the modules and building the tokenizer, before the first run. */
  baselineRssMb: number;
  compressions: number;
  prunes: number;
  summarizeCalls: number;
}

const OUTPUT_CHARS = 20_000;
const RUNS = 3;
const BENCH_MARK = new DataMark('0b1e2c3d4a5f6789');
const WORDS = [
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
  'value',
  'search',
  'file',
  '42',
  '2026',
  'the',
  'of',
  'and',
  'report',
  'page',
];

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

function result(content: string, toolCalls: GenerateResult['message']['toolCalls']): GenerateResult {
  return {
    message: { role: 'assistant', content, toolCalls },
    finishReason: toolCalls.length > 0 ? 'tool-calls' : 'stop',
    usage: { inputTokens: 0, outputTokens: 0 },
  };
}

/**
 * Counts every request the backend receives exactly, with the memory's own counter (o200k, per-message overheads;
 * every message tokenized once): the tables' Σ prompt tokens and peak request. The `llm-request` events cannot give
 * these, since far below the compression threshold their `requestTokens` is an upper bound, not a count. The time
 * spent counting is kept apart, so ms per step is the loop's own.
 */
class SentTokens {
  private readonly counter = new TokenCounter(gptTokenizer());
  promptTokens = 0;
  peakRequestTokens = 0;
  countingMs = 0;

  add(request: GenerateRequest): void {
    const started = performance.now();
    const tokens = this.counter.request(request.messages, request.tools ?? []);
    this.countingMs += performance.now() - started;
    this.promptTokens += tokens;
    // Every call counts for the peak, the summariser's too: each one must fit the window.
    this.peakRequestTokens = Math.max(this.peakRequestTokens, tokens);
  }
}

/** A zero-latency backend that calls the tool `steps` times, then submits; summaries are a fixed text. */
function loopBackend(
  steps: number,
  contextWindow: number,
  transport: Configuration['transport'],
  sent: SentTokens,
): LlmBackend {
  let executeCalls = 0;
  const backend: LlmBackend = {
    provider: 'bench',
    modelId: 'zero-latency',
    contextWindow,
    async generate(request: GenerateRequest): Promise<GenerateResult> {
      sent.add(request);
      if (request.purpose === 'summarize') {
        return result(
          'Fetched pages 1..k with fetch_page; each is a measurement page of about 20 000 characters; no errors; next: fetch the remaining pages, then submit.',
          [],
        );
      }
      const step = executeCalls++;
      if (step < steps)
        return result('', [{ id: `c${step}`, name: 'fetch_page', arguments: JSON.stringify({ page: step }) }]);
      return result('', [
        { id: 'submit', name: 'submit_answer', arguments: JSON.stringify({ answer: 'done', files: [] }) },
      ]);
    },
  };
  if (transport !== 'stream') return backend;
  return {
    ...backend,
    // What a provider stream looks like: the reply's text and each tool call's arguments in a few pieces, then finish.
    async *stream(request: GenerateRequest): AsyncIterable<StreamPart> {
      const answer = await backend.generate(request);
      for (const piece of pieces(answer.message.content)) yield { type: 'text-delta', text: piece };
      for (const call of answer.message.toolCalls) {
        for (const [i, piece] of pieces(call.arguments).entries()) {
          yield {
            type: 'tool-call-delta',
            id: call.id,
            ...(i === 0 ? { name: call.name } : {}),
            argumentsDelta: piece,
          };
        }
      }
      yield { type: 'finish', result: answer };
    },
  };
}

/** A text cut into pieces of 8 characters, as a provider streams it. */
function pieces(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += 8) out.push(text.slice(i, i + 8));
  return out;
}

/** The peers' behaviour: keeps every message whole and sends everything; counts with the same tokenizer. */
class NaiveMemory implements ExecutionMemory {
  private readonly counter = new TokenCounter(gptTokenizer());
  async boundObservation(invocation: ToolInvocation): Promise<string> {
    return invocation.text;
  }
  async fitRequest(request: PendingRequest): Promise<Message[]> {
    return request.messages;
  }
  pruneAfterOverflow(request: PendingRequest): Message[] {
    return request.messages;
  }
  countRequest(messages: readonly Message[], tools: readonly ToolSpec[]): number {
    return this.counter.request(messages, tools);
  }
}

async function runOnce(config: Configuration, outputs: string[]) {
  const root = mkdtempSync(join(tmpdir(), 'hh-bench-'));
  try {
    const memoryOptions: MemoryManagerOptions = config.mode === 'aging' ? { observationAging: {} } : {};
    const memory = config.mode === 'naive' ? new NaiveMemory() : new MemoryManager(memoryOptions);
    const fetchPage = defineTool({
      name: 'fetch_page',
      description: 'Fetches one measurement page.',
      input: z.object({ page: z.number() }),
      execute: ({ page }) => outputs[page] ?? '',
    });
    const totals = { compressions: 0, prunes: 0, summarizeCalls: 0 };
    const emit = (event: EventInput) => {
      if (event.type === 'llm-request') {
        if (event.purpose === 'summarize') totals.summarizeCalls++;
      } else if (event.type === 'memory-compress') totals.compressions++;
      else if (event.type === 'memory-prune') totals.prunes++;
    };
    // The naive loop is unbounded: give it a window nothing reaches, and count what it would send.
    const window = config.mode === 'naive' ? Number.MAX_SAFE_INTEGER : config.window;
    const sent = new SentTokens();
    const executor = new Executor({
      backend: loopBackend(config.steps, window, config.transport, sent),
      tools: new ToolRegistry([fetchPage]),
      memory,
      emit,
      limits: { maxIterations: config.steps + 10 },
    });
    // The real workspace: the memory saves every full output through it.
    const workspace = await LocalWorkspace.create({ dir: root });
    const started = performance.now();
    const run = await executor.run({
      runId: 'bench',
      purpose: 'execute',
      scope: 'subtask-1',
      request: 'Fetch every measurement page with fetch_page, then submit the largest value.',
      objective: 'Fetch every page, then submit.',
      workspace,
      // A fixed boundary, not a random one per run: the token figures of two builds then compare exactly.
      dataMark: BENCH_MARK,
    });
    const ms = performance.now() - started;
    if (run.status !== 'completed')
      throw new Error(`${config.mode} N=${config.steps}: run ${run.status}: ${run.error?.message}`);
    const { promptTokens, peakRequestTokens, countingMs } = sent;
    return { ...totals, promptTokens, peakRequestTokens, msPerStep: (ms - countingMs) / (config.steps + 1) };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Runs one configuration three times in this process and returns its measurement. */
export async function measure(config: Configuration): Promise<Measurement> {
  await warmUpTokenizer();
  const baselineRssMb = process.resourceUsage().maxRSS / 1024;
  const outputs = Array.from({ length: config.steps }, (_, i) => deterministicText(i + 1, OUTPUT_CHARS));
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await runOnce(config, outputs));
  const ms = runs.map((r) => r.msPerStep).sort((a, b) => a - b);
  const first = runs[0]!;
  return {
    ...config,
    promptTokens: first.promptTokens,
    peakRequestTokens: first.peakRequestTokens,
    compressions: first.compressions,
    prunes: first.prunes,
    summarizeCalls: first.summarizeCalls,
    msPerStep: ms[1]!,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    baselineRssMb,
  };
}

/** Bundles this file (dependencies left external) into `.tmp/bench/` and returns the script's path. */
async function compile(): Promise<string> {
  const { build } = await import('esbuild');
  const source = fileURLToPath(import.meta.url);
  const outfile = join(dirname(source), '..', '.tmp', 'bench', 'context-growth.mjs');
  await build({
    entryPoints: [source],
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outfile,
    logLevel: 'warning',
  });
  return outfile;
}

function inChild(script: string, config: Configuration): Promise<Measurement> {
  return new Promise((resolve, reject) => {
    const child = fork(script, ['--child', JSON.stringify(config)], {
      execArgv: [],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.once('message', (message) => resolve(message as Measurement));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`benchmark child for ${JSON.stringify(config)} exited with ${code}`));
    });
  });
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const pct = (n: number) => `${(n * 100).toFixed(1)} %`;

const naiveOf = (rows: Measurement[], steps: number) => rows.find((r) => r.mode === 'naive' && r.steps === steps)!;

/** Renders the measurements as a Markdown table with ratios to the naive loop. */
export function table(rows: Measurement[]): string {
  const lines = [
    '| configuration | N | window | Σ prompt tokens | vs naive | peak request | vs naive | peak / window | ms per step | vs naive | peak RSS (baseline) | vs naive | compress / prune / summarize calls |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of rows) {
    const base = naiveOf(rows, r.steps);
    const isNaive = r.mode === 'naive';
    const ratio = (value: number, of: number) => (isNaive ? '—' : `${(value / of).toFixed(2)}×`);
    lines.push(
      `| ${isNaive ? 'naive (whole history)' : r.mode === 'paper' ? 'memory, paper defaults' : 'memory + observation aging'} | ${r.steps} | ${isNaive ? 'unbounded' : fmt(r.window)} | ${fmt(r.promptTokens)} | ${isNaive ? '—' : pct(r.promptTokens / base.promptTokens)} | ${fmt(r.peakRequestTokens)} | ${isNaive ? '—' : pct(r.peakRequestTokens / base.peakRequestTokens)} | ${isNaive ? '—' : r.peakRequestTokens / r.window <= 1 ? (r.peakRequestTokens / r.window).toFixed(3) : '>1'} | ${r.msPerStep.toFixed(3)} | ${ratio(r.msPerStep, base.msPerStep)} | ${r.peakRssMb.toFixed(0)} MB (${r.baselineRssMb.toFixed(0)}) | ${ratio(r.peakRssMb, base.peakRssMb)} | ${isNaive ? '—' : `${r.compressions} / ${r.prunes} / ${r.summarizeCalls}`} |`,
    );
  }
  return lines.join('\n');
}

/** Renders the issue's targets beside what was measured; it reports, it does not judge the run. */
export function targets(rows: Measurement[]): string {
  const bounded = rows.filter((r) => r.mode !== 'naive');
  const at200 = (mode: Configuration['mode'], window: number) =>
    rows.find((r) => r.mode === mode && r.steps === 200 && r.window === window);
  const share = (r: Measurement | undefined) => (r ? r.promptTokens / naiveOf(rows, 200).promptTokens : Number.NaN);
  const peak = Math.max(...bounded.map((r) => r.peakRequestTokens / r.window));
  const ms = rows.filter((r) => r.mode !== 'naive' && r.steps === 200).map((r) => r.msPerStep);
  const rss = Math.max(...bounded.map((r) => r.peakRssMb));
  const row = (target: string, measured: string, met: boolean) =>
    `| ${target} | ${measured} | ${met ? 'yes' : '**no**'} |`;
  const aging = [share(at200('aging', 32_000)), share(at200('aging', 128_000))];
  return [
    '| target | measured | met |',
    '|---|---|---|',
    row('peak request ≤ 0.95 × window at every call', `max ${peak.toFixed(3)} × window`, peak <= 0.95),
    row(
      'Σ prompt tokens, N = 200, paper defaults, 32 000 window ≤ 10 % of naive',
      pct(share(at200('paper', 32_000))),
      share(at200('paper', 32_000)) <= 0.1,
    ),
    row(
      'Σ prompt tokens, N = 200, paper defaults, 128 000 window ≤ 20 % of naive',
      pct(share(at200('paper', 128_000))),
      share(at200('paper', 128_000)) <= 0.2,
    ),
    row(
      'Σ prompt tokens, N = 200, observation aging ≤ 5 % on both windows',
      aging.map(pct).join(' / '),
      aging.every((a) => a <= 0.05),
    ),
    row(
      'harness overhead ≤ 1 ms per step at N = 200',
      `${Math.min(...ms).toFixed(2)}–${Math.max(...ms).toFixed(2)} ms`,
      Math.max(...ms) <= 1,
    ),
    row('peak RSS ≤ 150 MB', `max ${rss.toFixed(0)} MB`, rss <= 150),
  ].join('\n');
}

/** Runs every configuration, each in its own process, and prints the table. */
export async function main(): Promise<void> {
  // `npm run bench -- --stream`: the same loop with a backend that streams (delta events built for every call).
  const transport = process.argv.includes('--stream') ? 'stream' : 'generate';
  const configs: Configuration[] = [];
  for (const steps of [50, 200]) {
    configs.push({ mode: 'naive', steps, window: 0, transport });
    for (const window of [128_000, 32_000]) {
      configs.push({ mode: 'paper', steps, window, transport }, { mode: 'aging', steps, window, transport });
    }
  }
  const script = await compile();
  const rows: Measurement[] = [];
  for (const config of configs) {
    process.stderr.write(`running ${config.mode} N=${config.steps} window=${config.window || 'unbounded'}…\n`);
    rows.push(await inChild(script, config));
  }
  console.log(
    `context-growth: ${OUTPUT_CHARS}-char tool outputs, zero-latency ${transport} backend, median of ${RUNS} runs, node ${process.version}\n`,
  );
  console.log(table(rows));
  console.log(`\n${targets(rows)}`);
}

if (process.argv[2] === '--child') {
  const config = JSON.parse(process.argv[3] ?? '{}') as Configuration;
  measure(config).then(
    (measurement) => process.send?.(measurement, () => process.exit(0)),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
