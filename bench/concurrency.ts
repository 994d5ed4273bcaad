/**
 * Concurrent runs in one process: k runs of horizon-harness started at once on a scripted backend whose every
 * call takes a simulated 200 ms (no CPU work), each run one 10-step subtask whose tool returns a deterministic
 * 20 000-character text (so the memory bounds and saves every observation, as in real runs). Measured in a child
 * process of its own (see `peer.ts`): wall time, peak RSS above the RSS before the runs, and the event loop's
 * delay (`perf_hooks.monitorEventLoopDelay`) while they run.
 * @module
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LlmBackend } from 'horizon-harness';

/** What k concurrent runs measured, in one process. */
export interface ConcurrencyMeasurement {
  runs: number;
  wallMs: number;
  /** Peak RSS while the runs were in flight, minus the RSS before they started (after a warm-up run). */
  rssGrowthMb: number;
  eventLoopDelayP99Ms: number;
  eventLoopDelayMaxMs: number;
  succeeded: number;
}

/** The simulated model latency of every call. */
export const LATENCY_MS = 200;
/** Model calls in the subtask: nine tool calls, then `submit_answer`. */
export const SUBTASK_STEPS = 10;
const OUTPUT_CHARS = 20_000;
const RSS_SAMPLE_MS = 20;

/** Starts `runs` runs at once (after one warm-up run) and measures them; `store: false` turns snapshots off. */
export async function measureConcurrency(runs: number, store = true): Promise<ConcurrencyMeasurement> {
  const { createHarness, defineTool } = await import('horizon-harness');
  const { submit, toolCall } = await import('horizon-harness/testing');
  const { z } = await import('zod');
  const output = 'measurement '.repeat(Math.ceil(OUTPUT_CHARS / 12)).slice(0, OUTPUT_CHARS);
  const fetchPage = defineTool({
    name: 'fetch_page',
    description: 'Fetches one measurement page.',
    input: z.object({ page: z.number() }),
    // Fetching a page changes nothing: declared so, as a host would, it runs without waiting for a durable save.
    readOnly: true,
    execute: ({ page }) => `page ${page}: ${output}`,
  });
  // A plain backend rather than ScriptedBackend, which records every request and would count as run memory.
  const backend: LlmBackend = {
    provider: 'bench',
    modelId: 'simulated-latency',
    contextWindow: 128_000,
    async generate(request) {
      await sleep(LATENCY_MS, undefined, request.signal ? { signal: request.signal } : {});
      if (request.purpose !== 'execute') return submit('final answer');
      const done = request.messages.filter((message) => message.role === 'tool').length;
      return done < SUBTASK_STEPS - 1 ? toolCall('fetch_page', { page: done }) : submit('subtask done');
    },
  };
  // One harness serves every run, as in a server; the warm-up loads the tokenizer and the lazy modules.
  const harness = createHarness({
    backend,
    tools: [fetchPage],
    decomposition: false,
    verification: false,
    ...(store ? {} : { store: false as const }),
  });
  await harness.run('warm up');

  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, RSS_SAMPLE_MS);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const started = performance.now();
  const results = await Promise.all(
    Array.from({ length: runs }, (_, i) => harness.run(`Fetch the pages of batch ${i + 1}, then answer.`)),
  );
  const wallMs = performance.now() - started;
  delay.disable();
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  await harness.close();
  return {
    runs,
    wallMs,
    rssGrowthMb: (peak - baseline) / 1024 / 1024,
    eventLoopDelayP99Ms: delay.percentile(99) / 1e6,
    eventLoopDelayMaxMs: delay.max / 1e6,
    succeeded: results.filter((result) => result.status === 'succeeded').length,
  };
}
