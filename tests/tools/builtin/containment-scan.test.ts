import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { Containment, PROCESS_TOKEN_ENV } from '../../../src/tools/builtin/sandbox/containment.js';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** Processes outside any process group the harness knows, found only by the token in their environment. */
function startTokenCarriers(token: string, count: number): Promise<ChildProcess[]> {
  const started = Array.from({ length: count }, () => {
    const child = spawn('sleep', ['60'], {
      env: { PATH: process.env.PATH, [PROCESS_TOKEN_ENV]: token },
      stdio: 'ignore',
    });
    children.push(child);
    return new Promise<ChildProcess>((resolve, reject) => {
      child.once('spawn', () => resolve(child));
      child.once('error', reject);
    });
  });
  return Promise.all(started);
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once('exit', () => resolve()));

describe.runIf(existsSync('/proc/self/environ'))('the /proc scan that finds a command’s processes', () => {
  it('runs asynchronously, with the event loop turning while it reads, and kills every token carrier', async () => {
    const containment = new Containment('none', 256);
    const carriers = await startTokenCarriers(containment.token, 20);
    let ticks = 0;
    let ticking = true;
    const tick = () => {
      ticks += 1;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const killing = containment.killAll();
    // A synchronous scan would have finished, with no turn of the event loop, before this line.
    expect(killing).toBeInstanceOf(Promise);
    expect(ticks).toBe(0);
    await killing;
    ticking = false;
    expect(ticks).toBeGreaterThan(0);
    await Promise.all(carriers.map(exited));
    for (const child of carriers) expect(child.signalCode).toBe('SIGKILL');
  });
});
