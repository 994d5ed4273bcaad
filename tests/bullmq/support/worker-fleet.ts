/**
 * The parent side of {@link ./worker-process.ts}: forks run workers, collects what they report, kills them.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { WorkerMessage, WorkerProcessConfig } from './worker-process.js';

const script = fileURLToPath(new URL('./worker-process.ts', import.meta.url));

/** Every message of every worker of a test, in arrival order. */
export class WorkerFleet {
  readonly messages: WorkerMessage[] = [];
  readonly #children = new Map<string, ChildProcess>();
  #waiters: Array<() => void> = [];

  /** Forks a worker and starts it: resolves once it takes jobs. */
  async start(config: WorkerProcessConfig): Promise<void> {
    await this.prepare(config);
    await this.release(config.name);
  }

  /** Forks a worker and resolves once it has loaded and warmed up, before it takes any job. */
  async prepare(config: WorkerProcessConfig): Promise<void> {
    const child = fork(script, [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, HH_WORKER: JSON.stringify(config) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.#children.set(config.name, child);
    child.on('message', (message: WorkerMessage) => {
      this.messages.push(message);
      for (const wake of this.#waiters.splice(0)) wake();
    });
    await this.waitFor((m) => m.kind === 'warm' && m.worker === config.name);
  }

  /** Lets a prepared worker take jobs; resolves once it does. */
  async release(name: string): Promise<void> {
    this.#children.get(name)?.send('start');
    await this.waitFor((m) => m.kind === 'ready' && m.worker === name);
  }

  /** Resolves with the first message (already received or still to come) that `matches`. */
  async waitFor(matches: (message: WorkerMessage) => boolean): Promise<WorkerMessage> {
    for (;;) {
      const found = this.messages.find(matches);
      if (found) return found;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** SIGKILLs a worker: no cleanup, no lock released, exactly what a crashed machine does. */
  async kill(name: string): Promise<void> {
    const child = this.#children.get(name);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** Asks every live worker to close, and kills those that do not exit in time. */
  async stopAll(): Promise<void> {
    await Promise.all(
      [...this.#children.values()].map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.send('close');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }

  /** The run events one worker reported for one run. */
  eventsOf(runId: string, worker?: string): Array<Extract<WorkerMessage, { kind: 'event' }>> {
    return this.messages.filter(
      (m): m is Extract<WorkerMessage, { kind: 'event' }> =>
        m.kind === 'event' && m.runId === runId && (worker === undefined || m.worker === worker),
    );
  }
}
