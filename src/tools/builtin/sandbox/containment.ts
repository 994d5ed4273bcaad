/**
 * Keeping every process a command starts countable, killable and bounded: a per-call token in each process's
 * environment; a pids cgroup (a hard process limit and a complete process list) and a memory cgroup (a limit on the
 * memory of all its processes together) when the harness may create them; `RLIMIT_NPROC` and `RLIMIT_AS` inside
 * bubblewrap otherwise.
 * @module
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { cgroupBase, CommandCgroup } from './cgroups.js';

/** `bytes` random bytes in hex; node:crypto loads with the first command rather than with the package. */
function randomHex(bytes: number): string {
  return process.getBuiltinModule('node:crypto').randomBytes(bytes).toString('hex');
}

/** The environment variable that tags every process of one command; the harness kills whatever carries it. */
export const PROCESS_TOKEN_ENV = 'HORIZON_HARNESS_PROCESS_TOKEN';

/** How the number of processes of one command is bounded. */
export type ProcessLimitKind = 'cgroup' | 'rlimit' | 'none';

/**
 * How the memory of one command is bounded: `cgroup`, the memory of all its processes together (RAM, and swap where
 * the kernel accounts it; the kernel kills a process when it is reached); `rlimit`, the address space of each process
 * (`RLIMIT_AS`; an allocation beyond it fails); `none`, not at all.
 */
export type MemoryLimitKind = 'cgroup' | 'rlimit' | 'none';

let prlimitPath: string | null | undefined;

/** Absolute path of util-linux `prlimit`, or null. */
function findPrlimit(): string | null {
  if (prlimitPath === undefined) {
    const found = ['/usr/bin/prlimit', '/bin/prlimit'].find((candidate) => existsSync(candidate));
    prlimitPath = found ?? null;
  }
  return prlimitPath;
}

/**
 * Which process limit applies: a pids cgroup when one can be created here; else, inside bubblewrap and not as root,
 * `RLIMIT_NPROC` (counted per user namespace, so per sandbox); else none. Root is exempt from `RLIMIT_NPROC`.
 */
export function processLimitKind(sandboxed: boolean): ProcessLimitKind {
  if (cgroupBase('pids') !== null) return 'cgroup';
  if (sandboxed && process.getuid?.() !== 0 && findPrlimit() !== null) return 'rlimit';
  return 'none';
}

/** Which memory limit applies: a memory cgroup when one can be created here; else, inside bubblewrap, `RLIMIT_AS`. */
export function memoryLimitKind(sandboxed: boolean): MemoryLimitKind {
  if (cgroupBase('memory') !== null) return 'cgroup';
  if (sandboxed && findPrlimit() !== null) return 'rlimit';
  return 'none';
}

/** The memory limit of one command: how it is enforced and how many bytes. */
export interface MemoryLimit {
  kind: MemoryLimitKind;
  maxBytes: number;
}

/** One command's processes: how to start them tagged and limited, and how to end all of them. @internal */
export class Containment {
  /** Random per call: nothing else carries it. */
  readonly token = randomHex(16);
  private readonly cgroups: CommandCgroup[] = [];
  private readonly memoryCgroup: CommandCgroup | undefined;
  /** The OOM kills counted when the memory cgroup was removed. */
  private finalOomKills: number | undefined;

  constructor(
    readonly limit: ProcessLimitKind,
    private readonly maxProcesses: number,
    readonly memory: MemoryLimit = { kind: 'none', maxBytes: 0 },
  ) {
    const tag = this.token.slice(0, 12);
    const pidsBase = limit === 'cgroup' ? cgroupBase('pids') : null;
    const memoryBase = memory.kind === 'cgroup' ? cgroupBase('memory') : null;
    try {
      // cgroup v2 has one tree: one cgroup carries both limits.
      if (pidsBase && memoryBase && pidsBase.dir === memoryBase.dir) {
        const both = new CommandCgroup(pidsBase, tag, { maxProcesses, maxMemoryBytes: memory.maxBytes });
        this.cgroups.push(both);
        this.memoryCgroup = both;
      } else {
        if (pidsBase) this.cgroups.push(new CommandCgroup(pidsBase, tag, { maxProcesses }));
        if (memoryBase) {
          this.memoryCgroup = new CommandCgroup(memoryBase, tag, { maxMemoryBytes: memory.maxBytes });
          this.cgroups.push(this.memoryCgroup);
        }
      }
    } catch (error) {
      for (const cgroup of this.cgroups) cgroup.remove();
      throw error;
    }
  }

  /** The program and arguments that start `argv` inside the cgroups (before exec, so no child escapes them). */
  outerCommand(argv: readonly string[]): string[] {
    if (this.cgroups.length === 0) return [...argv];
    return [
      '/bin/sh',
      '-c',
      'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n - 1)); done; exec "$@"',
      'horizon-harness-cgroup',
      String(this.cgroups.length),
      ...this.cgroups.map((cgroup) => cgroup.procsFile),
      ...argv,
    ];
  }

  /** The program and arguments run inside the sandbox (the rlimits apply in its user namespace). */
  innerCommand(argv: readonly string[]): string[] {
    const limits: string[] = [];
    if (this.limit === 'rlimit') limits.push(`--nproc=${this.maxProcesses}:${this.maxProcesses}`);
    if (this.memory.kind === 'rlimit') limits.push(`--as=${this.memory.maxBytes}:${this.memory.maxBytes}`);
    const prlimit = findPrlimit();
    if (limits.length === 0 || prlimit === null) return [...argv];
    return [prlimit, ...limits, '--', ...argv];
  }

  /**
   * How many of the command's processes the kernel killed for going past the memory cgroup's limit so far (0 without
   * a memory cgroup); after {@link dispose}, the count when the cgroup was removed.
   */
  async oomKills(): Promise<number> {
    if (this.finalOomKills !== undefined) return this.finalOomKills;
    return (await this.memoryCgroup?.oomKills()) ?? 0;
  }

  /**
   * SIGKILLs every process in the cgroups or carrying the token, until none is left (a bounded number of rounds).
   * Asynchronous: finding the token means reading every process's environment under `/proc`, which a fork bomb
   * makes long, so the reads go through the thread pool and the event loop keeps running. Never rejects.
   */
  async killAll(): Promise<void> {
    for (let round = 0; round < 20; round += 1) {
      const [inCgroups, carrying] = await Promise.all([
        Promise.all(this.cgroups.map((cgroup) => cgroup.pids())),
        pidsCarrying(`${PROCESS_TOKEN_ENV}=${this.token}`),
      ]);
      const pids = new Set([...inCgroups.flat(), ...carrying]);
      pids.delete(process.pid);
      if (pids.size === 0) return;
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
    }
  }

  /** Kills what is left and removes the cgroups (retrying while killed processes are being reaped). */
  async dispose(): Promise<void> {
    // Read before the cgroup goes: its counters go with it.
    if (this.finalOomKills === undefined && this.memoryCgroup) this.finalOomKills = await this.memoryCgroup.oomKills();
    await this.killAll();
    for (const cgroup of [...this.cgroups]) {
      for (let attempt = 0; attempt < 50; attempt += 1) {
        try {
          cgroup.remove();
          this.cgroups.splice(this.cgroups.indexOf(cgroup), 1);
          break;
        } catch {
          await this.killAll();
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    }
  }
}

/** Environments read at once while looking for the token: enough to keep the thread pool busy, not to flood it. */
const SCAN_CONCURRENCY = 16;

/** Processes (readable by this user) whose initial environment holds `entry`; empty where `/proc` is missing. */
async function pidsCarrying(entry: string): Promise<number[]> {
  let names: string[];
  try {
    names = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  const needle = Buffer.from(`\0${entry}\0`);
  const found: number[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < names.length) {
      const name = names[next++] as string;
      try {
        const environ = Buffer.concat([Buffer.from([0]), await readFile(`/proc/${name}/environ`), Buffer.from([0])]);
        if (environ.includes(needle)) found.push(Number(name));
      } catch {
        // Exited, or another user's process.
      }
    }
  };
  await Promise.all(Array.from({ length: SCAN_CONCURRENCY }, worker));
  return found;
}
