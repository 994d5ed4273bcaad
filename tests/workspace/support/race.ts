/**
 * A race between writes through the code under test and a process that swaps directories for links, run until enough
 * happened on both sides (counts, never seconds), so that it is as real on a loaded machine as on a quiet one.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const SWAPPER = fileURLToPath(new URL('./swap-directory.py', import.meta.url));

/** What must have happened before the race stops. */
export const RACE_TARGETS = { attempts: 5_000, swaps: 2_000, landed: 200 } as const;

/** What a race did. */
export interface RaceTally {
  /** Write operations tried. */
  attempts: number;
  /** Operations that completed (bytes landed somewhere). */
  landed: number;
  /** Directory swaps the swapper made. */
  swaps: number;
}

/**
 * Swaps each of `targets` (absolute paths) between a directory and a link to `outside` while every operation of
 * `operations` runs in its own loop; stops once {@link RACE_TARGETS} are all reached. An operation that rejects (or
 * resolves to a tool result with `isError`) did not land: refusals are expected while a directory is a link.
 */
export async function race(
  outside: string,
  targets: readonly string[],
  operations: ReadonlyArray<(n: number) => Promise<unknown>>,
): Promise<RaceTally> {
  const child = spawn('python3', [SWAPPER, outside, ...targets], { stdio: ['pipe', 'pipe', 'inherit'] });
  const tally: RaceTally = { attempts: 0, landed: 0, swaps: 0 };
  let ready!: () => void;
  const started = new Promise<void>((resolve) => {
    ready = resolve;
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line === 'ready') ready();
    const swaps = /^swaps (\d+)$/.exec(line);
    if (swaps) tally.swaps = Number(swaps[1]);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await Promise.race([started, exited.then(() => Promise.reject(new Error('the swapper exited before it was ready')))]);
  const enough = () =>
    tally.attempts >= RACE_TARGETS.attempts && tally.swaps >= RACE_TARGETS.swaps && tally.landed >= RACE_TARGETS.landed;
  const loop = async (operation: (n: number) => Promise<unknown>): Promise<void> => {
    for (let n = 0; !enough(); n += 1) {
      tally.attempts += 1;
      await operation(n).then(
        (result) => {
          if (!(result as { isError?: boolean } | undefined)?.isError) tally.landed += 1;
        },
        () => undefined,
      );
      // An append to a kept-open file completes without I/O callbacks: let the swapper's lines through.
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  await Promise.all(operations.map(loop));
  child.stdin.end();
  await exited;
  return tally;
}
