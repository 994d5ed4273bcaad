/**
 * The parallel-subtasks benchmark of issue 14: a plan of two independent pairs (subtasks 0 and 1 independent, 2
 * depends on 0, 3 on 1) on a scripted backend with a fixed simulated latency per model call, run with
 * `limits.maxParallelSubtasks` 1 (the paper's strict order) and 2, medians of 3 runs each after a warm-up. Prints
 * both wall times, their ratio against the goal (≤ 0.6) and whether the two deliverables (answer and every file's
 * content) are identical.
 *
 * Each subtask writes four notes, one tool call per model call, and submits (5 model calls); the plan and the
 * synthesis take one call each. Only the execute stage can overlap, so the ideal ratio is (2 + 2 × 5 × 0.5) / (2 + 4 × 5)
 * ≈ 0.55 of the model time.
 *
 * Run it with `npm run bench` or `npx tsx bench/parallel.ts`.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import type { GenerateRequest, GenerateResult, Message } from '../src/backend/types.js';
import { createHarness } from '../src/harness/harness.js';
import { reply, submit, toolCall } from '../src/testing/replies.js';
import { ScriptedBackend } from '../src/testing/scripted-backend.js';
import { defineTool } from '../src/tools/define-tool.js';

const LATENCY_MS = 50;
const NOTES_PER_SUBTASK = 4;
const RUNS = 3;
const GOAL = 0.6;
const TASK = 'Research A and B, then build on each, and deliver every note.';
const PLAN = [
  { title: 'Research A', dependsOn: [] },
  { title: 'Research B', dependsOn: [] },
  { title: 'Build on A', dependsOn: [0] },
  { title: 'Build on B', dependsOn: [1] },
].map((s) => ({ ...s, objective: s.title, expectedOutput: `notes of ${s.title}` }));

const noteFiles = PLAN.flatMap((_s, i) =>
  Array.from({ length: NOTES_PER_SUBTASK }, (_n, k) => `notes/s${i + 1}-${k}.md`),
);

function textOf(message: Message | undefined): string {
  if (!message) return '';
  return typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
}

/** The model: a function of the request, answering after LATENCY_MS. */
async function model(request: GenerateRequest): Promise<GenerateResult> {
  await sleep(LATENCY_MS, undefined, request.signal ? { signal: request.signal } : {});
  if (request.purpose === 'plan') return reply(JSON.stringify({ subtasks: PLAN }));
  if (request.purpose === 'synthesize') return submit('Notes of A and B, built on.', noteFiles);
  const task = textOf(request.messages.find((m) => m.role === 'user'));
  const n = Number(/Subtask (\d) of 4:/.exec(task)?.[1]);
  const step = request.messages.filter((m) => m.role === 'tool').length;
  if (step < NOTES_PER_SUBTASK) {
    return toolCall('write_note', { path: `notes/s${n}-${step}.md`, text: `subtask ${n}, note ${step}` });
  }
  return submit(
    `subtask ${n} wrote ${NOTES_PER_SUBTASK} notes`,
    noteFiles.filter((f) => f.startsWith(`notes/s${n}-`)),
  );
}

const writeNote = defineTool({
  name: 'write_note',
  description: 'Writes a text file.',
  input: z.object({ path: z.string(), text: z.string() }),
  execute: async ({ path: file, text }, context) => {
    await context.workspace.writeFile(file, text, { tool: 'write_note', scope: context.scope });
    return { text: `wrote ${file}`, files: [file] };
  },
});

/** Four characters a token: no tokenizer tables load, so the runs time the scheduling, not the counting. */
const roughTokenizer = { count: (text: string) => Math.ceil(text.length / 4) };

/** One run: its wall time and its deliverable as a user sees it (the answer and every delivered file's content). */
async function runOnce(
  maxParallelSubtasks: number,
  store: false | undefined,
): Promise<{ ms: number; deliverable: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-parallel-'));
  try {
    const harness = createHarness({
      backend: new ScriptedBackend(model),
      tools: [writeNote],
      workspace: dir,
      verification: false,
      memory: { tokenizer: roughTokenizer },
      store,
      limits: { maxParallelSubtasks },
    });
    const started = performance.now();
    const result = await harness.run(TASK);
    const ms = performance.now() - started;
    if (result.status !== 'succeeded') throw new Error(`the run ended ${result.status}: ${result.error?.message}`);
    const files = await Promise.all(
      [...result.deliverable.files].sort().map(async (f) => [f, await readFile(path.join(dir, f), 'utf8')]),
    );
    return { ms, deliverable: JSON.stringify({ answer: result.deliverable.answer, files }) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Median wall times with 1 and 2 parallel subtasks, and every distinct deliverable the runs produced. */
async function measure(store: false | undefined) {
  const ms: Record<1 | 2, number[]> = { 1: [], 2: [] };
  const deliverables = new Set<string>();
  for (const limit of [1, 2] as const) {
    for (let i = 0; i < RUNS; i++) {
      const run = await runOnce(limit, store);
      ms[limit].push(run.ms);
      deliverables.add(run.deliverable);
    }
  }
  return { sequential: median(ms[1]), parallel: median(ms[2]), identical: deliverables.size === 1 };
}

/** Runs the benchmark and prints its figures. */
export async function parallelBench(): Promise<void> {
  await runOnce(2, false);
  console.log(
    '\nParallel subtasks: two independent pairs, 4 subtasks of %d model calls, %d ms per model call (median of %d)',
    NOTES_PER_SUBTASK + 1,
    LATENCY_MS,
    RUNS,
  );
  for (const [label, store] of [
    ['without snapshots (store: false)', false],
    ['with the default file store', undefined],
  ] as const) {
    const { sequential, parallel, identical } = await measure(store);
    const ratio = parallel / sequential;
    console.log('  %s', label);
    console.log('    maxParallelSubtasks 1 (the paper): %s ms', sequential.toFixed(0));
    console.log('    maxParallelSubtasks 2:             %s ms', parallel.toFixed(0));
    console.log('    ratio %s (goal ≤ %s): %s', ratio.toFixed(2), GOAL, ratio <= GOAL ? 'yes' : 'no');
    console.log('    identical deliverable: %s', identical ? 'yes' : 'no');
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await parallelBench();
