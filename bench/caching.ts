/**
 * The prompt-caching benchmark of issue 23: what a long loop and a multi-subtask pipeline run cost in billed input
 * dollars when the provider caches prompt prefixes, for the Vercel AI SDK's keep-everything loop with caching on and
 * for horizon-harness (paper defaults, and with observation aging), under an Anthropic price sheet (marker-based
 * cache) and an OpenAI one (automatic cache). Every provider is `SimulatedPromptCache` from `horizon-harness/testing`
 * on a simulated clock (one call every {@link SECONDS_PER_CALL} s), so the figures are the same on every run; time to
 * first token follows a prefill model (every token not read from the cache × {@link PREFILL_MS_PER_TOKEN}).
 * Prints the table and each target as measured / goal / met, then the trade-off of observation aging's batch size
 * (docs/memory.md, "Prompt caching"): the long loop with no aging and with batches of 1 to 16 rounds, on a 128 K and
 * a 32 K window. Each harness run is billed under both sheets at once (the memory sends the same requests to any
 * caching provider).
 * @module
 */
import { z } from 'zod';
import {
  createHarness,
  defineTool,
  type GenerateRequest,
  type GenerateResult,
  type HarnessEvent,
  type LlmBackend,
  type Message,
  type ToolSpec,
  type Usage,
} from '../src/index.js';
import { planOf, submit, toolCall, verdict } from '../src/testing/replies.js';
import { aiSdkTurn, deterministicText, fakeAiSdkModel } from './long-loop.js';
import { DEFAULTS } from '../src/defaults.js';
import { SimulatedPromptCache } from '../src/testing/simulated-prompt-cache.js';

/** Tool calls of the long loop, and pages per subtask × subtasks of the pipeline run. */
const LOOP_STEPS = 200;
const PIPELINE_SUBTASKS = 4;
const PAGES_PER_SUBTASK = 25;
const PAGE_CHARS = 20_000;
const WINDOW = 128_000;
/** Simulated time between two model calls: the cache's TTL is measured on it. */
const SECONDS_PER_CALL = 5;
/** The prefill model: each input token the provider does not read from its cache costs this long before the first token. */
const PREFILL_MS_PER_TOKEN = 0.2;
const OUTPUT_TOKENS_PER_CALL = 50;
const TASK = 'Fetch every measurement page with fetch_page, then answer with the largest value.';

/** A price sheet and the cache its provider runs. Prices per million tokens, in USD. */
interface Sheet {
  name: string;
  cache: 'markers' | 'automatic';
  inputPerMTok: number;
  cachedInputPerMTok: number;
  /** Cache writes (markers only); automatic caches bill none. */
  cacheWritePerMTok: number;
  /** Markers only: how far before a marker the provider looks for a cached prefix (Anthropic: 20 blocks). */
  lookbackParts?: number;
}

/** Claude Sonnet 4.5's list prices: $3 input, reads 0.1×, 5-minute writes 1.25× (docs/backends.md has the sources). */
const ANTHROPIC: Sheet = {
  name: 'Anthropic (Sonnet 4.5: $3 in, $0.30 read, $3.75 write)',
  cache: 'markers',
  inputPerMTok: 3,
  cachedInputPerMTok: 0.3,
  cacheWritePerMTok: 3.75,
  lookbackParts: 20,
};
/** GPT-4.1's list prices as published at its launch: $2 input, cached 0.25×, no write charge (check the current sheet). */
const OPENAI: Sheet = {
  name: 'OpenAI (GPT-4.1: $2 in, $0.50 cached)',
  cache: 'automatic',
  inputPerMTok: 2,
  cachedInputPerMTok: 0.5,
  cacheWritePerMTok: 2,
};

/** The sheets every run is billed under; the first is the one the harness's backend declares (markers). */
const SHEETS = [ANTHROPIC, OPENAI] as const;

type Workload = 'long loop' | 'pipeline';
type Contender = 'ai-sdk' | 'paper' | 'aging';

/** What one run was billed and how its prompts fared in the cache. */
export interface CacheMeasurement {
  workload: Workload;
  contender: Contender;
  sheet: string;
  calls: number;
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteInputTokens: number;
  /** Billed input cost, USD. */
  inputCost: number;
  /** Cached share of input over the calls that follow another call of their loop with no compression between. */
  hitRatioBetweenCompressions: number;
  compressions: number;
  /** Largest request as the harness counts it (`report.peakRequestTokens`; the AI SDK's, by the simulation). */
  peakRequestTokens: number;
  /** Mean time to first token under the prefill model, ms. */
  meanTtftMs: number;
}

/** Page `n`'s text, as the long loop of the peer benchmark makes it. */
const page = (seed: number) => deterministicText(seed, PAGE_CHARS);

/** Adds up the calls of one run: tokens, billed input and prefill time. */
class Bill {
  calls = 0;
  input = 0;
  cached = 0;
  written = 0;
  prefillMs = 0;
  peak = 0;
  private readonly between = { cached: 0, input: 0 };

  constructor(private readonly sheet: Sheet) {}

  add(usage: GenerateResult['usage'], afterBreak: boolean): void {
    const cached = usage.cachedInputTokens ?? 0;
    const written = usage.cacheWriteInputTokens ?? 0;
    this.calls += 1;
    this.input += usage.inputTokens;
    this.cached += cached;
    this.written += written;
    this.peak = Math.max(this.peak, usage.inputTokens);
    this.prefillMs += (usage.inputTokens - cached) * PREFILL_MS_PER_TOKEN;
    if (!afterBreak) {
      this.between.cached += cached;
      this.between.input += usage.inputTokens;
    }
  }

  get cost(): number {
    const { sheet } = this;
    const uncached = this.input - this.cached - this.written;
    return (
      (uncached * sheet.inputPerMTok +
        this.cached * sheet.cachedInputPerMTok +
        this.written * sheet.cacheWritePerMTok) /
      1e6
    );
  }

  get hitRatio(): number {
    return this.between.input > 0 ? this.between.cached / this.between.input : 0;
  }
}

/** A price sheet's simulated cache on a simulated clock, and the bill of the calls it serves. */
function meter(sheet: Sheet, now: () => number) {
  const cache = new SimulatedPromptCache({
    mode: sheet.cache,
    now,
    ...(sheet.lookbackParts ? { lookbackParts: sheet.lookbackParts } : {}),
  });
  return { sheet, cache, bill: new Bill(sheet) };
}

/** How horizon-harness's memory is set up for one run: the paper's defaults, or observation aging in batches. */
interface MemorySetup {
  /** Rounds of old observations that age at once (`observationAging.batchRounds`); absent: no aging. */
  agingBatch?: number;
  window: number;
}

/** What one harness run measured under each price sheet, and the cache breaks it reported. */
interface HarnessRun {
  bills: Bill[];
  compressions: number;
  peakRequestTokens: number;
  cacheBreaks: string;
}

/**
 * horizon-harness on the workload. Its backend declares a marker-based cache (the memory treats every caching
 * provider alike: it batches aging and sends the same requests), and each request is billed by both sheets'
 * simulated caches, so one run measures both.
 */
async function harnessRun(workload: Workload, setup: MemorySetup): Promise<HarnessRun> {
  const pages = workload === 'long loop' ? LOOP_STEPS : PIPELINE_SUBTASKS * PAGES_PER_SUBTASK;
  const perLoop = workload === 'long loop' ? LOOP_STEPS : PAGES_PER_SUBTASK;
  let now = 0;
  const meters = SHEETS.map((sheet) => meter(sheet, () => now));
  // Each call's usage under each sheet, until its llm-response event bills it (calls are made one at a time).
  const pending: Usage[][] = [];
  let served = 0;
  let inLoop = 0;
  const backend: LlmBackend = {
    provider: 'bench',
    modelId: 'simulated',
    contextWindow: setup.window,
    promptCache: meters[0]?.cache.capability,
    generate: async (request: GenerateRequest): Promise<GenerateResult> => {
      now += SECONDS_PER_CALL * 1000;
      const usage = meters.map((m) => ({ ...m.cache.observe(request), outputTokens: OUTPUT_TOKENS_PER_CALL }));
      pending.push(usage);
      const step = ((): GenerateResult => {
        switch (request.purpose) {
          case 'plan':
            return planOf(...Array.from({ length: PIPELINE_SUBTASKS }, (_, i) => `pages ${i + 1}`));
          case 'summarize':
            return submitText('Fetched pages with fetch_page, about 20 000 characters each; next: the rest.');
          case 'verify':
            return verdict(true);
          case 'synthesize':
            return submit('done');
          default:
            if (inLoop < perLoop && served < pages) {
              inLoop += 1;
              return toolCall('fetch_page', { page: served++ });
            }
            inLoop = 0;
            return submit('done');
        }
      })();
      return { ...step, usage: usage[0] ?? emptyUsage() };
    },
  };
  const fetchPage = defineTool({
    name: 'fetch_page',
    description: 'Fetches one measurement page.',
    input: z.object({ page: z.number() }),
    readOnly: true,
    execute: ({ page: n }) => page(n + 1),
  });
  const harness = createHarness({
    backend,
    tools: [fetchPage],
    decomposition: workload === 'pipeline',
    verification: workload === 'pipeline',
    store: false,
    limits: { maxIterations: perLoop + 10 },
    ...(setup.agingBatch ? { memory: { observationAging: { batchRounds: setup.agingBatch } } } : {}),
  });
  // A call breaks its loop's run of cached prefixes when it is a loop's first, a summary, or follows a compression.
  const brokenScopes = new Set<string>();
  const seenScopes = new Set<string>();
  let compressions = 0;
  harness.onAny((event: HarnessEvent) => {
    if (event.type === 'memory-compress' || event.type === 'memory-prune') {
      compressions += 1;
      brokenScopes.add(event.scope ?? '');
    }
    if (event.type !== 'llm-response') return;
    const scope = event.scope ?? '';
    const afterBreak = event.purpose === 'summarize' || !seenScopes.has(scope) || brokenScopes.has(scope);
    seenScopes.add(scope);
    if (event.purpose !== 'summarize') brokenScopes.delete(scope);
    const usage = pending.shift();
    meters.forEach((m, i) => m.bill.add(usage?.[i] ?? event.usage, afterBreak));
  });
  const result = await harness.run(TASK);
  await harness.close();
  if (result.status !== 'succeeded') throw new Error(`caching bench: harness run ${result.status}`);
  const breaks = Object.entries(result.report.cacheBreaks)
    .map(([cause, count]) => `${count?.count ?? 0} ${cause}`)
    .join(', ');
  return {
    bills: meters.map((m) => m.bill),
    compressions,
    peakRequestTokens: result.report.peakRequestTokens,
    cacheBreaks: breaks || '0',
  };
}

function submitText(content: string): GenerateResult {
  return { message: { role: 'assistant', content, toolCalls: [] }, finishReason: 'stop', usage: emptyUsage() };
}

function emptyUsage() {
  return { inputTokens: 0, outputTokens: 0 };
}

function measurement(
  workload: Workload,
  contender: Contender,
  sheet: Sheet,
  bill: Bill,
  compressions: number,
  peakRequestTokens: number,
): CacheMeasurement {
  return {
    workload,
    contender,
    sheet: sheet.name,
    calls: bill.calls,
    inputTokens: bill.input,
    cachedInputTokens: bill.cached,
    cacheWriteInputTokens: bill.written,
    inputCost: bill.cost,
    hitRatioBetweenCompressions: bill.hitRatio,
    compressions,
    peakRequestTokens,
    meanTtftMs: bill.prefillMs / Math.max(1, bill.calls),
  };
}

/**
 * The AI SDK's loop (`generateText` with one tool and a stop condition) on the same pages, keeping every message.
 * Caching on as its docs show it: under Anthropic, `providerOptions.anthropic.cacheControl` on the system message
 * and, through `prepareStep`, on the newest message of every step; OpenAI caches by itself.
 */
async function aiSdkRun(workload: Workload, sheet: Sheet): Promise<CacheMeasurement> {
  const { generateText, tool, stepCountIs } = await import('ai');
  const pages = workload === 'long loop' ? LOOP_STEPS : PIPELINE_SUBTASKS * PAGES_PER_SUBTASK;
  let now = 0;
  const { cache, bill } = meter(sheet, () => now);
  const cacheControl = { anthropic: { cacheControl: { type: 'ephemeral' as const } } };
  const marked = sheet.cache === 'markers';
  let calls = 0;
  const model = fakeAiSdkModel('simulated', (options) => {
    now += SECONDS_PER_CALL * 1000;
    const request = fromAiSdkPrompt(options.prompt, options.tools ?? []);
    bill.add({ ...cache.observe(request), outputTokens: OUTPUT_TOKENS_PER_CALL }, calls === 0);
    return aiSdkTurn(calls++, pages);
  });
  await generateText({
    model,
    messages: [
      {
        role: 'system',
        content: 'You fetch pages with fetch_page and answer.',
        ...(marked ? { providerOptions: cacheControl } : {}),
      },
      { role: 'user', content: TASK },
    ],
    tools: {
      fetch_page: tool({
        description: 'Fetches one measurement page.',
        inputSchema: z.object({ page: z.number() }),
        execute: async ({ page: n }) => page(n + 1),
      }),
    },
    stopWhen: stepCountIs(pages + 5),
    ...(marked
      ? {
          prepareStep: ({ messages }: { messages: Array<Record<string, unknown>> }) => ({
            messages: messages.map((m, i) => (i === messages.length - 1 ? { ...m, providerOptions: cacheControl } : m)),
          }),
        }
      : {}),
  } as Parameters<typeof generateText>[0]);
  return measurement(workload, 'ai-sdk', sheet, bill, 0, bill.peak);
}

/**
 * An AI SDK prompt as the harness's messages, its marked messages (`providerOptions.anthropic.cacheControl`) as
 * cache breakpoints: what the Anthropic provider would send, in the shape the simulated cache reads.
 */
function fromAiSdkPrompt(prompt: unknown[], tools: unknown[]): GenerateRequest {
  const messages: Message[] = [];
  const cacheBreakpoints: number[] = [];
  for (const raw of prompt as Array<{ role: string; content: unknown; providerOptions?: Record<string, unknown> }>) {
    const parts = Array.isArray(raw.content) ? (raw.content as Array<Record<string, unknown>>) : [];
    const text = (kind: string) =>
      parts
        .filter((p) => p.type === kind)
        .map((p) => String(p.text ?? ''))
        .join('');
    if (raw.role === 'system') messages.push({ role: 'system', content: String(raw.content) });
    else if (raw.role === 'user') messages.push({ role: 'user', content: text('text') });
    else if (raw.role === 'assistant') {
      const toolCalls = parts
        .filter((p) => p.type === 'tool-call')
        .map((p) => ({ id: String(p.toolCallId), name: String(p.toolName), arguments: JSON.stringify(p.input) }));
      messages.push({ role: 'assistant', content: text('text'), toolCalls });
    } else if (raw.role === 'tool') {
      for (const p of parts) {
        const output = p.output as { value?: unknown } | undefined;
        messages.push({
          role: 'tool',
          toolCallId: String(p.toolCallId),
          toolName: String(p.toolName),
          content: typeof output?.value === 'string' ? output.value : JSON.stringify(output?.value ?? ''),
        });
      }
    }
    if (raw.providerOptions?.anthropic) cacheBreakpoints.push(messages.length - 1);
  }
  const specs: ToolSpec[] = (
    tools as Array<{ name: string; description?: string; inputSchema: Record<string, unknown> }>
  ).map((t) => ({ name: t.name, description: t.description ?? '', inputSchema: t.inputSchema }));
  return { messages, tools: specs, cacheBreakpoints };
}

const usd = (n: number) => `$${n.toFixed(3)}`;
const pct = (n: number) => `${(n * 100).toFixed(1)} %`;
const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
const target = (name: string, measured: string, goal: string, met: boolean) =>
  row([name, measured, goal, met ? 'yes' : '**no**']);

const CONTENDER_LABELS: Record<Contender, string> = {
  'ai-sdk': 'Vercel AI SDK loop, caching on (full history)',
  paper: 'horizon-harness, paper defaults',
  aging: 'horizon-harness, aging',
};

/** Renders the measurements and the targets as Markdown tables. */
export function cachingReport(results: CacheMeasurement[]): string {
  const lines = [
    `\nPrompt caching: billed input in USD with simulated provider caches (SimulatedPromptCache), long loop N = ${LOOP_STEPS} tool calls of ${PAGE_CHARS} chars and a ${PIPELINE_SUBTASKS}-subtask pipeline run (${PAGES_PER_SUBTASK} pages each), ${WINDOW / 1000} K window, one call every ${SECONDS_PER_CALL} s, prefill ${PREFILL_MS_PER_TOKEN} ms per uncached token\n`,
    '| workload | price sheet | contender | calls | Σ input tokens | cached | written | billed input | hit ratio between compressions | compressions | peak request | mean TTFT |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map((r) =>
      row([
        r.workload,
        r.sheet,
        CONTENDER_LABELS[r.contender],
        String(r.calls),
        `${(r.inputTokens / 1e6).toFixed(2)} M`,
        `${(r.cachedInputTokens / 1e6).toFixed(2)} M`,
        `${(r.cacheWriteInputTokens / 1e6).toFixed(2)} M`,
        usd(r.inputCost),
        pct(r.hitRatioBetweenCompressions),
        String(r.compressions),
        r.peakRequestTokens.toLocaleString('en-US'),
        `${r.meanTtftMs.toFixed(0)} ms`,
      ]),
    ),
    '',
    '| target | measured | goal | met |',
    '|---|---:|---:|---|',
  ];
  for (const r of results.filter((m) => m.contender !== 'ai-sdk')) {
    const peer = results.find((m) => m.contender === 'ai-sdk' && m.workload === r.workload && m.sheet === r.sheet);
    if (!peer) continue;
    const label = `${r.workload}, ${r.sheet.split(' (')[0]}, ${r.contender === 'paper' ? 'paper defaults' : 'aging'}`;
    const costRatio = r.inputCost / peer.inputCost;
    const ttftRatio = r.meanTtftMs / peer.meanTtftMs;
    lines.push(
      target(`billed input vs the AI SDK's, ${label}`, `${costRatio.toFixed(2)}×`, '≤ 0.33×', costRatio <= 0.33),
      target(
        `cache hit ratio between compressions, ${label}`,
        pct(r.hitRatioBetweenCompressions),
        '≥ 80 %',
        r.hitRatioBetweenCompressions >= 0.8,
      ),
      target(
        `peak request vs the window, ${label}`,
        r.peakRequestTokens.toLocaleString('en-US'),
        `≤ ${WINDOW.toLocaleString('en-US')}`,
        r.peakRequestTokens <= WINDOW,
      ),
      target(
        `mean time to first token vs the AI SDK's, ${label}`,
        `${ttftRatio.toFixed(2)}×`,
        '≤ 1.0×',
        ttftRatio <= 1,
      ),
    );
  }
  return lines.join('\n');
}

/** The memory set-ups of the aging trade-off table: no aging, and aging in batches of 1 to 16 rounds. */
const AGING_BATCHES = [undefined, 1, 4, 8, 16] as const;
const SWEEP_WINDOWS = [WINDOW, 32_000] as const;

/** One row of the aging trade-off table: the long loop under one memory set-up, billed under both sheets. */
interface AgingRow {
  setup: MemorySetup;
  run: HarnessRun;
}

/** Renders the aging trade-off table (docs/memory.md, "Prompt caching"). */
export function agingReport(rows: AgingRow[]): string {
  const billed = (bill: Bill | undefined) =>
    bill ? `${usd(bill.cost)} (${((100 * bill.cached) / Math.max(1, bill.input)).toFixed(0)} %)` : '–';
  return [
    `\nObservation aging and the prompt cache: the long loop (N = ${LOOP_STEPS}) per memory set-up, each run billed under both sheets; hit % is the share of all input read from the cache\n`,
    '| configuration | window | Σ input tokens | cache breaks | Anthropic billed input (hit %) | OpenAI billed input (hit %) | peak request |',
    '|---|---:|---:|---|---:|---:|---:|',
    ...rows.map(({ setup, run }) =>
      row([
        setup.agingBatch ? `aging, batches of ${setup.agingBatch}` : 'paper defaults',
        setup.window.toLocaleString('en-US'),
        (run.bills[0]?.input ?? 0).toLocaleString('en-US'),
        run.cacheBreaks,
        billed(run.bills[0]),
        billed(run.bills[1]),
        run.peakRequestTokens.toLocaleString('en-US'),
      ]),
    ),
  ].join('\n');
}

/**
 * `npm run bench`'s caching section: every workload × sheet × contender, the targets, and the aging trade-off table
 * on the long loop; prints the tables.
 */
export async function cachingBench(): Promise<CacheMeasurement[]> {
  const runs = new Map<string, HarnessRun>();
  // A harness run bills both sheets: the main table and the trade-off table share the runs they both need.
  const runOf = async (workload: Workload, setup: MemorySetup) => {
    const key = `${workload}|${setup.window}|${setup.agingBatch ?? 0}`;
    let run = runs.get(key);
    if (!run) {
      process.stderr.write(`caching benchmark: horizon-harness, ${key}…\n`);
      run = await harnessRun(workload, setup);
      runs.set(key, run);
    }
    return run;
  };
  const results: CacheMeasurement[] = [];
  for (const workload of ['long loop', 'pipeline'] as const) {
    for (const [i, sheet] of SHEETS.entries()) {
      process.stderr.write(`caching benchmark: the AI SDK, ${workload}, ${sheet.name}…\n`);
      results.push(await aiSdkRun(workload, sheet));
      for (const contender of ['paper', 'aging'] as const) {
        const setup = { window: WINDOW, ...(contender === 'aging' ? { agingBatch: DEFAULTS.agingBatchRounds } : {}) };
        const run = await runOf(workload, setup);
        const bill = run.bills[i];
        if (bill) results.push(measurement(workload, contender, sheet, bill, run.compressions, run.peakRequestTokens));
      }
    }
  }
  console.log(cachingReport(results));
  const rows: AgingRow[] = [];
  for (const window of SWEEP_WINDOWS) {
    for (const agingBatch of AGING_BATCHES) {
      const setup = { window, ...(agingBatch ? { agingBatch } : {}) };
      rows.push({ setup, run: await runOf('long loop', setup) });
    }
  }
  console.log(agingReport(rows));
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) await cachingBench();
