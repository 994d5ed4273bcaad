/**
 * What journaling a side effect costs per step: one executor loop of N steps on a zero-latency scripted model, each
 * step one call of a tool that does nothing, declared read-only in one run and not read-only (a side effect, whose
 * start must be stored before it runs) in the other, with the default file store in the workspace and the default
 * `durability: 'async'`. The difference per step is what the harness pays to journal the call durably; it is set
 * against a raw append + `fdatasync` of a line of the same size to a file in the same directory, measured in the
 * same process right before, so that the ratio holds on any disk.
 * @module
 */
import { constants } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { GenerateRequest } from '../src/backend/types.js';
import { createHarness } from '../src/harness/harness.js';
import { ScriptedBackend } from '../src/testing/scripted-backend.js';
import { submit, toolCall } from '../src/testing/replies.js';
import { defineTool } from '../src/tools/define-tool.js';

/** Per-step figures of one configuration, medians over the rounds. */
export interface StepCost {
  readOnlyMs: number;
  sideEffectMs: number;
  /** One raw append of a journal-sized line and its `fdatasync`. */
  rawAppendMs: number;
  /**
   * The side-effecting step's extra cost, in raw appends: the median over the rounds of each round's
   * (side-effecting − read-only) / raw, the raw append measured right before and right after that round's loops.
   */
  extraAppends: number;
  /** The lowest and highest of the rounds' ratios: how far the disk's `fdatasync` time moved under the load. */
  extraAppendsRange: [number, number];
}

const roughTokenizer = { count: (text: string) => Math.ceil(text.length / 4) };

/** One run of `steps` tool calls of `tool`; returns the wall time per step. */
export async function loopOf(dir: string, steps: number, readOnly: boolean): Promise<number> {
  const done = (request: GenerateRequest) => request.messages.filter((m) => m.role === 'tool').length;
  const backend = new ScriptedBackend((request) =>
    done(request) < steps ? toolCall('step', { n: done(request), note: 'x'.repeat(200) }) : submit('done'),
  );
  const tool = defineTool({
    name: 'step',
    description: 'Does one step.',
    input: z.object({ n: z.number(), note: z.string() }),
    readOnly,
    execute: async ({ n }) => `step ${n} done`,
  });
  const harness = createHarness({
    backend,
    tools: [tool],
    workspace: dir,
    decomposition: false,
    verification: false,
    memory: { tokenizer: roughTokenizer },
    limits: { maxIterations: steps + 10 },
  });
  const started = performance.now();
  const result = await harness.run('Do the steps.');
  const elapsed = performance.now() - started;
  await harness.close();
  if (result.status !== 'succeeded') throw new Error(`step-cost run ended ${result.status}`);
  return elapsed / steps;
}

/** A raw durable append: `count` lines of `bytes` bytes, each written and `fdatasync`ed; returns ms per append. */
async function rawAppends(dir: string, count: number, bytes: number): Promise<number> {
  const handle = await open(path.join(dir, 'raw.log'), constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND);
  const line = Buffer.from(`${'x'.repeat(bytes - 1)}\n`);
  try {
    const started = performance.now();
    for (let i = 0; i < count; i++) {
      await handle.write(line);
      await handle.datasync();
    }
    return (performance.now() - started) / count;
  } finally {
    await handle.close();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/**
 * Measures `rounds` times, alternating the configurations so that a change in the machine's load reaches both alike.
 * Each round's ratio sets its loops against raw appends measured right before and right after them: on a shared disk
 * one `fdatasync` can take 1 ms in one round and 5 ms in the next, so a ratio of medians taken minutes apart says
 * more about the disk's moods than about the harness.
 * @param lineBytes size of the raw appends: about one journal entry of a step
 */
export async function measureStepCost(steps = 50, rounds = 9, lineBytes = 1500): Promise<StepCost> {
  const root = await mkdtemp(path.join(tmpdir(), 'harness-step-cost-'));
  try {
    // A first run loads what the harness loads lazily.
    await loopOf(path.join(root, 'warm'), 5, false);
    const readOnly: number[] = [];
    const sideEffect: number[] = [];
    const raw: number[] = [];
    const ratios: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const before = await rawAppends(root, steps, lineBytes);
      readOnly.push(await loopOf(path.join(root, `ro-${round}`), steps, true));
      sideEffect.push(await loopOf(path.join(root, `se-${round}`), steps, false));
      const around = (before + (await rawAppends(root, steps, lineBytes))) / 2;
      raw.push(around);
      ratios.push(((sideEffect.at(-1) as number) - (readOnly.at(-1) as number)) / around);
    }
    return {
      readOnlyMs: median(readOnly),
      sideEffectMs: median(sideEffect),
      rawAppendMs: median(raw),
      extraAppends: median(ratios),
      extraAppendsRange: [Math.min(...ratios), Math.max(...ratios)],
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('step-cost.ts')) {
  // `--loop <read-only|side-effect> <steps> <dir>`: one loop alone, for a process that counts its system calls.
  const [flag, kind, steps, dir] = process.argv.slice(2);
  if (flag === '--loop') await loopOf(dir as string, Number(steps), kind === 'read-only');
  else console.log(await measureStepCost());
}
