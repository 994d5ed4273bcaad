/**
 * Keeping every process a command starts countable and killable: a per-call token in each process's environment,
 * a pids cgroup (a hard process limit and a complete process list) when the harness may create one, and
 * `RLIMIT_NPROC` inside bubblewrap's user namespace otherwise.
 * @module
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/** `bytes` random bytes in hex; node:crypto loads with the first command rather than with the package. */
function randomHex(bytes: number): string {
  return process.getBuiltinModule('node:crypto').randomBytes(bytes).toString('hex');
}

/** The environment variable that tags every process of one command; the harness kills whatever carries it. */
export const PROCESS_TOKEN_ENV = 'HORIZON_HARNESS_PROCESS_TOKEN';

/** How the number of processes of one command is bounded. */
export type ProcessLimitKind = 'cgroup' | 'rlimit' | 'none';

let cgroupBase: string | null | undefined;

/** The directory under which this process may create pids cgroups (cgroup v1 `pids` or v2 with `pids` delegated), or null. */
function pidsCgroupBase(): string | null {
  if (cgroupBase !== undefined) return cgroupBase;
  cgroupBase = null;
  let membership = '';
  try {
    membership = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return cgroupBase;
  }
  const candidates: string[] = [];
  for (const line of membership.split('\n')) {
    const [, controllers, where] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (where === undefined) continue;
    if (controllers?.split(',').includes('pids')) candidates.push(path.join('/sys/fs/cgroup/pids', where));
    if (controllers === '') {
      const dir = path.join('/sys/fs/cgroup', where);
      try {
        if (readFileSync(path.join(dir, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('pids'))
          candidates.push(dir);
      } catch {
        // Not a cgroup v2 mount.
      }
    }
  }
  for (const dir of candidates) {
    const trial = path.join(dir, `horizon-harness-probe-${process.pid}-${randomHex(4)}`);
    try {
      mkdirSync(trial);
      const usable = existsSync(path.join(trial, 'pids.max'));
      rmdirSync(trial);
      if (usable) {
        cgroupBase = dir;
        return dir;
      }
    } catch {
      // Not writable by this user.
    }
  }
  return cgroupBase;
}

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
  if (pidsCgroupBase() !== null) return 'cgroup';
  if (sandboxed && process.getuid?.() !== 0 && findPrlimit() !== null) return 'rlimit';
  return 'none';
}

/** One command's processes: how to start them tagged and limited, and how to end all of them. @internal */
export class Containment {
  /** Random per call: nothing else carries it. */
  readonly token = randomHex(16);
  private readonly cgroup: string | undefined;

  constructor(
    readonly limit: ProcessLimitKind,
    private readonly maxProcesses: number,
  ) {
    if (limit === 'cgroup') {
      const dir = path.join(pidsCgroupBase() as string, `horizon-harness-${process.pid}-${this.token.slice(0, 12)}`);
      mkdirSync(dir);
      writeFileSync(path.join(dir, 'pids.max'), String(maxProcesses));
      this.cgroup = dir;
    }
  }

  /** The program and arguments that start `argv` inside the cgroup (before exec, so no child escapes it). */
  outerCommand(argv: readonly string[]): string[] {
    if (!this.cgroup) return [...argv];
    return [
      '/bin/sh',
      '-c',
      'echo $$ > "$1" && shift && exec "$@"',
      'horizon-harness-cgroup',
      path.join(this.cgroup, 'cgroup.procs'),
      ...argv,
    ];
  }

  /** The program and arguments run inside the sandbox (the rlimit applies in its user namespace). */
  innerCommand(argv: readonly string[]): string[] {
    if (this.limit !== 'rlimit') return [...argv];
    return [findPrlimit() as string, `--nproc=${this.maxProcesses}:${this.maxProcesses}`, '--', ...argv];
  }

  /**
   * SIGKILLs every process in the cgroup or carrying the token, until none is left (a bounded number of rounds).
   * Asynchronous: finding the token means reading every process's environment under `/proc`, which a fork bomb
   * makes long, so the reads go through the thread pool and the event loop keeps running. Never rejects.
   */
  async killAll(): Promise<void> {
    for (let round = 0; round < 20; round += 1) {
      const [inCgroup, carrying] = await Promise.all([
        this.cgroupPids(),
        pidsCarrying(`${PROCESS_TOKEN_ENV}=${this.token}`),
      ]);
      const pids = new Set([...inCgroup, ...carrying]);
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

  /** Kills what is left and removes the cgroup (retrying while killed processes are being reaped). */
  async dispose(): Promise<void> {
    await this.killAll();
    if (!this.cgroup) return;
    for (let attempt = 0; attempt < 50; attempt += 1) {
      try {
        rmdirSync(this.cgroup);
        return;
      } catch {
        await this.killAll();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  }

  private async cgroupPids(): Promise<number[]> {
    if (!this.cgroup) return [];
    try {
      const procs = await readFile(path.join(this.cgroup, 'cgroup.procs'), 'utf8');
      return procs.split('\n').filter(Boolean).map(Number);
    } catch {
      return [];
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
