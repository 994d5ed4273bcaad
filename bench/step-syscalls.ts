/**
 * What journaling a side effect costs per step, counted rather than timed: the system calls of one executor loop of
 * `bench/step-cost.ts` (read-only steps in one process, side-effecting ones in another), counted by `strace -f -c`
 * over every thread (the thread pool does the file work), at two loop lengths so that what the process does once
 * (start, module loading, the run's first and last snapshots) cancels out. A count does not move with the machine's
 * load as a time does: it shows which durable writes and file operations a side-effecting step adds.
 * Needs `strace` (Debian package strace); skipped with a note otherwise.
 * @module
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The calls counted: durable writes, writes, and opening, renaming and closing files. */
export const COUNTED_CALLS = [
  'fdatasync',
  'fsync',
  'write',
  'pwrite64',
  'writev',
  'openat',
  'rename',
  'close',
] as const;
type Counted = (typeof COUNTED_CALLS)[number];
export type CallsPerStep = Record<Counted, number>;

export interface StepSyscalls {
  readOnly: CallsPerStep;
  sideEffect: CallsPerStep;
  /** Side-effecting minus read-only, per step. */
  extra: CallsPerStep;
}

const STEP_COST = fileURLToPath(new URL('./step-cost.ts', import.meta.url));

export function hasStrace(): boolean {
  try {
    execFileSync('strace', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Counts the calls of one loop of `steps` steps in a process of its own. */
async function countCalls(kind: 'read-only' | 'side-effect', steps: number, root: string): Promise<CallsPerStep> {
  const out = path.join(root, `${kind}-${steps}.strace`);
  const dir = path.join(root, `${kind}-${steps}`);
  const strace = ['-f', '-qq', '-c', '-U', 'name,calls', '-e', `trace=${COUNTED_CALLS.join(',')}`, '-o', out];
  const loop = ['--import', 'tsx', STEP_COST, '--loop', kind, String(steps), dir];
  execFileSync('strace', [...strace, process.execPath, ...loop], { stdio: 'ignore' });
  const counts = Object.fromEntries(COUNTED_CALLS.map((call) => [call, 0])) as CallsPerStep;
  for (const line of (await readFile(out, 'utf8')).split('\n')) {
    const [name, calls] = line.trim().split(/\s+/);
    if (name && (COUNTED_CALLS as readonly string[]).includes(name)) counts[name as Counted] = Number(calls);
  }
  return counts;
}

/** Calls per step of `kind`: the difference between a loop of `long` and one of `short` steps, per step. */
async function perStep(kind: 'read-only' | 'side-effect', short: number, long: number, root: string) {
  const [a, b] = [await countCalls(kind, short, root), await countCalls(kind, long, root)];
  return mapCalls((call) => (b[call] - a[call]) / (long - short));
}

function mapCalls(value: (call: Counted) => number): CallsPerStep {
  return Object.fromEntries(COUNTED_CALLS.map((call) => [call, value(call)])) as CallsPerStep;
}

export async function measureStepSyscalls(short = 20, long = 60): Promise<StepSyscalls> {
  const root = await mkdtemp(path.join(tmpdir(), 'harness-step-syscalls-'));
  try {
    const readOnly = await perStep('read-only', short, long, root);
    const sideEffect = await perStep('side-effect', short, long, root);
    return { readOnly, sideEffect, extra: mapCalls((call) => sideEffect[call] - readOnly[call]) };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** Prints the counts as a table (or why they were skipped). */
export async function stepSyscallsBench(): Promise<void> {
  if (!hasStrace()) {
    console.log('\nSystem calls per step: skipped, strace is not installed (Debian package strace).');
    return;
  }
  const { readOnly, sideEffect, extra } = await measureStepSyscalls();
  console.log('\nSystem calls per step of a loop (strace -f -c, every thread; loops of 60 less loops of 20 steps)');
  console.table(
    Object.fromEntries(
      COUNTED_CALLS.map((call) => [
        call,
        { 'read-only step': readOnly[call], 'side-effecting step': sideEffect[call], extra: extra[call] },
      ]),
    ),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await stepSyscallsBench();
