/**
 * The cgroups the harness may create for one command: where (under the harness's own cgroup, in the v1 hierarchy of
 * the controller or the v2 tree), with which limits (`pids.max`, the memory limit without swap), and how many times
 * the kernel's OOM killer struck inside one.
 * @module
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** The controllers the sandbox limits a command with. */
export type CgroupController = 'pids' | 'memory';

/** Where cgroups of one controller can be created: a directory of this process's own cgroup, v1 or v2. */
export interface CgroupBase {
  dir: string;
  version: 1 | 2;
}

/** The file whose presence in a fresh cgroup shows the controller is active there. */
const PROBE_FILE: Record<CgroupController, Record<1 | 2, string>> = {
  pids: { 1: 'pids.max', 2: 'pids.max' },
  memory: { 1: 'memory.limit_in_bytes', 2: 'memory.max' },
};

const bases = new Map<CgroupController, CgroupBase | null>();

/** `bytes` random bytes in hex; node:crypto loads with the first command rather than with the package. */
function randomHex(bytes: number): string {
  return process.getBuiltinModule('node:crypto').randomBytes(bytes).toString('hex');
}

/**
 * The directory under which this process may create cgroups with `controller` (cgroup v1: the controller's
 * hierarchy at this process's own path; v2: this process's cgroup, with the controller in its `subtree_control`), or
 * null. Only the process's own cgroup counts: a cgroup created elsewhere would take the command out of the limits the
 * host put on the harness. Probed once per process, by creating and removing a trial cgroup.
 */
export function cgroupBase(controller: CgroupController): CgroupBase | null {
  const known = bases.get(controller);
  if (known !== undefined) return known;
  let found: CgroupBase | null = null;
  for (const candidate of candidates(controller)) {
    const trial = path.join(candidate.dir, `horizon-harness-probe-${process.pid}-${randomHex(4)}`);
    try {
      mkdirSync(trial);
      const usable = existsSync(path.join(trial, PROBE_FILE[controller][candidate.version]));
      rmdirSync(trial);
      if (usable) {
        found = candidate;
        break;
      }
    } catch {
      // Not writable by this user.
    }
  }
  bases.set(controller, found);
  return found;
}

function candidates(controller: CgroupController): CgroupBase[] {
  let membership = '';
  try {
    membership = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return [];
  }
  const found: CgroupBase[] = [];
  for (const line of membership.split('\n')) {
    const [, controllers, where] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (where === undefined) continue;
    if (controllers?.split(',').includes(controller)) {
      found.push({ dir: path.join('/sys/fs/cgroup', controller, where), version: 1 });
    }
    if (controllers === '') {
      const dir = path.join('/sys/fs/cgroup', where);
      try {
        if (readFileSync(path.join(dir, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes(controller))
          found.push({ dir, version: 2 });
      } catch {
        // Not a cgroup v2 mount.
      }
    }
  }
  return found;
}

/** The limits one command's cgroup enforces. */
export interface CgroupLimits {
  maxProcesses?: number;
  maxMemoryBytes?: number;
}

/** A cgroup made for one command, in one hierarchy (v1) or the unified tree (v2). @internal */
export class CommandCgroup {
  readonly dir: string;

  /** Creates `<base>/horizon-harness-<pid>-<tag>` and writes the limits; throws when the kernel refuses one. */
  constructor(
    private readonly base: CgroupBase,
    tag: string,
    limits: CgroupLimits,
  ) {
    this.dir = path.join(base.dir, `horizon-harness-${process.pid}-${tag}`);
    mkdirSync(this.dir);
    try {
      if (limits.maxProcesses !== undefined) this.write('pids.max', String(limits.maxProcesses));
      if (limits.maxMemoryBytes !== undefined) this.limitMemory(limits.maxMemoryBytes);
    } catch (error) {
      rmdirSync(this.dir);
      throw error;
    }
  }

  /** The file a process writes its pid into to join the cgroup. */
  get procsFile(): string {
    return path.join(this.dir, 'cgroup.procs');
  }

  /** The pids of the cgroup's processes; empty once it is gone. */
  async pids(): Promise<number[]> {
    try {
      const procs = await readFile(this.procsFile, 'utf8');
      return procs.split('\n').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  }

  /** How many processes the OOM killer killed in this cgroup (a memory cgroup), or 0 when the kernel does not say. */
  async oomKills(): Promise<number> {
    const file = this.base.version === 1 ? 'memory.oom_control' : 'memory.events';
    try {
      const text = await readFile(path.join(this.dir, file), 'utf8');
      return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? 0);
    } catch {
      return 0;
    }
  }

  /** Removes the cgroup; throws while processes are still in it. */
  remove(): void {
    rmdirSync(this.dir);
  }

  private limitMemory(bytes: number): void {
    const v1 = this.base.version === 1;
    this.write(v1 ? 'memory.limit_in_bytes' : 'memory.max', String(bytes));
    // Without this the limit holds only for RAM and a command could go on in swap; where the kernel does not account
    // swap (no such file, or swap accounting off) there is nothing more to bound.
    try {
      if (v1) this.write('memory.memsw.limit_in_bytes', String(bytes));
      else this.write('memory.swap.max', '0');
    } catch {
      // Swap is not accounted here.
    }
  }

  private write(file: string, value: string): void {
    writeFileSync(path.join(this.dir, file), value);
  }
}
