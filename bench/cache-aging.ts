/**
 * What prompt caching makes of the memory's rewrites (docs/memory.md, "Prompt caching"): the long-loop workload (one
 * subtask, N tool calls of 20 000 deterministic characters each) through the real Executor and MemoryManager, on a
 * backend that declares a prompt cache, billed under a prefix-cache price model: each execute request is served from
 * the cache up to the longest prefix it shares, whole message by whole message, with the loop's previous request,
 * and pays the rest as uncached input; the summariser's requests are never cached. Two price sheets per million input
 * tokens: Anthropic (Claude Sonnet: $3 input, $0.30 cache read, $3.75 cache write, the uncached part written) and OpenAI
 * (GPT-5: $1.25 input, $0.125 cached, prefixes of ≥ 1 024 tokens in 128-token steps, no write premium). Token counts
 * are the memory's own (o200k). Deterministic: run `npx tsx bench/cache-aging.ts [N]`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { GenerateRequest, GenerateResult, LlmBackend, Message } from '../src/backend/types.js';
import type { EventInput } from '../src/events.js';
import { Executor } from '../src/executor/executor.js';
import {
  MemoryManager,
  TokenCounter,
  gptTokenizer,
  type MemoryManagerOptions,
  warmUpTokenizer,
} from '../src/memory/index.js';
import { DataMark } from '../src/prompts/datamark.js';
import { defineTool } from '../src/tools/define-tool.js';
import { ToolRegistry } from '../src/tools/registry.js';
import { LocalWorkspace } from '../src/workspace/local-workspace.js';
import { deterministicText } from './context-growth.js';

const OUTPUT_CHARS = 20_000;
const MARK = new DataMark('0b1e2c3d4a5f6789');

/** Dollars per million input tokens. */
const SHEETS = {
  anthropic: { input: 3, read: 0.3, write: 3.75, minPrefix: 1_024, step: 1 },
  openai: { input: 1.25, read: 0.125, write: 1.25, minPrefix: 1_024, step: 128 },
} as const;
type Sheet = (typeof SHEETS)[keyof typeof SHEETS];

interface Configuration {
  name: string;
  window: number;
  memory: MemoryManagerOptions;
}

/** Bills the requests one loop sends under a prefix cache, per price sheet. */
class PrefixBill {
  private readonly counter = new TokenCounter(gptTokenizer());
  private previous: Message[] = [];
  readonly dollars = { anthropic: 0, openai: 0 };
  inputTokens = 0;
  cachedTokens = { anthropic: 0, openai: 0 };

  add(request: GenerateRequest): void {
    const total = this.counter.request(request.messages, request.tools ?? []);
    let shared = 0;
    if (request.purpose !== 'summarize') {
      let i = 0;
      while (i < this.previous.length && JSON.stringify(this.previous[i]) === JSON.stringify(request.messages[i])) i++;
      // Tool specs and the shared messages: what the cache can serve.
      shared = i === 0 ? 0 : this.counter.request(request.messages.slice(0, i), request.tools ?? []);
      this.previous = request.messages.slice();
    }
    this.inputTokens += total;
    for (const [name, sheet] of Object.entries(SHEETS) as Array<[keyof typeof SHEETS, Sheet]>) {
      const cached = shared < sheet.minPrefix ? 0 : shared - (shared % sheet.step);
      this.cachedTokens[name] += cached;
      const uncached = total - cached;
      // A summariser's request is a one-off: billed as plain input, never written to the cache.
      const perToken = request.purpose === 'summarize' ? sheet.input : sheet.write;
      this.dollars[name] += (cached * sheet.read + uncached * perToken) / 1e6;
    }
  }
}

async function run(config: Configuration, steps: number, outputs: string[]) {
  // The bill counts with gpt-tokenizer: exact from the first request, not byte bounds while its table loads.
  await warmUpTokenizer();
  const root = mkdtempSync(join(tmpdir(), 'hh-cache-bench-'));
  try {
    const bill = new PrefixBill();
    let executeCalls = 0;
    const backend: LlmBackend = {
      provider: 'bench',
      modelId: 'prefix-cache',
      contextWindow: config.window,
      promptCache: { mode: 'markers' },
      async generate(request): Promise<GenerateResult> {
        bill.add(request);
        const step = request.purpose === 'summarize' ? -1 : executeCalls++;
        const toolCalls =
          step < 0
            ? []
            : step < steps
              ? [{ id: `c${step}`, name: 'fetch_page', arguments: JSON.stringify({ page: step }) }]
              : [{ id: 'submit', name: 'submit_answer', arguments: JSON.stringify({ answer: 'done', files: [] }) }];
        const content =
          step < 0 ? 'Fetched pages 1..k with fetch_page; no errors; next: fetch the rest, then submit.' : '';
        return {
          message: { role: 'assistant', content, toolCalls },
          finishReason: toolCalls.length ? 'tool-calls' : 'stop',
          usage: { inputTokens: 0, outputTokens: 0 },
        };
      },
    };
    const fetchPage = defineTool({
      name: 'fetch_page',
      description: 'Fetches one measurement page.',
      input: z.object({ page: z.number() }),
      execute: ({ page }) => outputs[page] ?? '',
    });
    const breaks: Record<string, number> = {};
    const emit = (event: EventInput) => {
      if (event.type === 'cache-break') breaks[event.cause] = (breaks[event.cause] ?? 0) + 1;
    };
    const executor = new Executor({
      backend,
      tools: new ToolRegistry([fetchPage]),
      memory: new MemoryManager(config.memory),
      emit,
      limits: { maxIterations: steps + 10 },
    });
    const result = await executor.run({
      runId: 'bench',
      purpose: 'execute',
      scope: 'subtask-1',
      request: 'Fetch every measurement page with fetch_page, then submit the largest value.',
      objective: 'Fetch every page, then submit.',
      workspace: await LocalWorkspace.create({ dir: root }),
      dataMark: MARK,
    });
    if (result.status !== 'completed') throw new Error(`${config.name}: ${result.status} ${result.error?.message}`);
    return { bill, breaks };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const steps = Number(process.argv[2] ?? 200);
const outputs = Array.from({ length: steps }, (_, i) => deterministicText(i + 1, OUTPUT_CHARS));
const configurations: Configuration[] = [128_000, 32_000].flatMap((window) => [
  { name: 'paper defaults', window, memory: {} },
  ...[1, 4, 8, 16].map((batchRounds) => ({
    name: `aging, batches of ${batchRounds}`,
    window,
    memory: { observationAging: { keepRecentRounds: 3, batchRounds } },
  })),
]);
console.log(`| configuration | window | Σ input tokens | cache breaks | Anthropic $ (hit %) | OpenAI $ (hit %) |`);
console.log('|---|---:|---:|---|---:|---:|');
for (const config of configurations) {
  const { bill, breaks } = await run(config, steps, outputs);
  const hit = (name: keyof typeof SHEETS) => ((100 * bill.cachedTokens[name]) / bill.inputTokens).toFixed(0);
  const causes =
    Object.entries(breaks)
      .map(([cause, count]) => `${count} ${cause}`)
      .join(', ') || '0';
  console.log(
    `| ${config.name} | ${config.window.toLocaleString('en')} | ${bill.inputTokens.toLocaleString('en')} | ${causes} | ` +
      `${bill.dollars.anthropic.toFixed(3)} (${hit('anthropic')}) | ${bill.dollars.openai.toFixed(3)} (${hit('openai')}) |`,
  );
}
