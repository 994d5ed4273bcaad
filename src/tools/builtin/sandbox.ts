/**
 * Sandboxing of shell commands and Python with bubblewrap (`bwrap`): the workspace read-write at its own path, the
 * system directories read-only and nothing else of the host, a private size-capped `/tmp`, `/proc` and `/dev`, no
 * capabilities, no network unless allowed, an allow-listed environment, process and memory limits, and every process
 * a command started killed when it ends. Details: docs/security.md.
 * @module
 */
import type { ChildProcess, StdioOptions } from 'node:child_process';
import { lstatSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { HarnessError } from '../../errors.js';
import {
  Containment,
  type MemoryLimitKind,
  memoryLimitKind,
  PROCESS_TOKEN_ENV,
  processLimitKind,
  type ProcessLimitKind,
} from './sandbox/containment.js';
import { commandEnv } from './sandbox/environment.js';
import { baseSandboxArgs, HARNESS_STATE_DIR, sandboxArgs, type WorkspaceAccess } from './sandbox/mounts.js';
import {
  type AppliedLimits,
  DEFAULT_MAX_MEMORY_BYTES,
  DEFAULT_MAX_TMP_BYTES,
  type TmpLimitKind,
} from './sandbox/resource-limits.js';

export { changedFiles, snapshotFiles } from './sandbox/file-snapshot.js';
export { sandboxArgs, type SandboxArgsOptions, type WorkspaceAccess } from './sandbox/mounts.js';
export type { MemoryLimitKind, ProcessLimitKind } from './sandbox/containment.js';
export {
  type AppliedLimits,
  DEFAULT_MAX_MEMORY_BYTES,
  DEFAULT_MAX_TMP_BYTES,
  type TmpLimitKind,
} from './sandbox/resource-limits.js';

/** node:child_process, loaded by the first command rather than with the package. */
function childProcess(): typeof import('node:child_process') {
  return process.getBuiltinModule('node:child_process');
}

/**
 * Processes one command (with everything it starts) may run at once, where a limit can be enforced.
 * @defaultValue 256
 */
export const DEFAULT_MAX_PROCESSES = 256;

/** `auto`: bwrap when it works here, else no sandbox and every command needs approval; `bwrap`: require it; `none`: run on the host (explicit opt-out). */
export type SandboxMode = 'auto' | 'bwrap' | 'none';

/** Whether bwrap can create a sandbox on this machine. */
export interface BwrapProbe {
  available: boolean;
  /** The program that was tried. */
  path: string;
  /** Why it is (un)available, with what to do. */
  reason: string;
  /** True when this bubblewrap can cap the size of a tmpfs (`--size`, bubblewrap ≥ 0.7, not setuid). */
  tmpfsSize?: boolean;
}

/** What a tool will do about sandboxing, and the warning the harness should report (e.g. in `run-start`). */
export interface SandboxStatus {
  mode: SandboxMode;
  /** True when commands run inside bwrap. */
  active: boolean;
  /** True when every command needs approval because no sandbox is available (mode `auto` without bwrap). */
  requiresApproval: boolean;
  /** Human-readable explanation; set as `warning` when the user should know. */
  reason: string;
  /** How the number of processes per command is bounded: a pids cgroup, `RLIMIT_NPROC` in the sandbox, or not at all. */
  processLimit: ProcessLimitKind;
  /**
   * How the memory of a command is bounded: a memory cgroup (all its processes together), `RLIMIT_AS` in the sandbox
   * (each process's address space), or not at all. Left out by callers that build a status themselves: worked out
   * at each spawn then.
   */
  memoryLimit?: MemoryLimitKind;
  /** How the sandbox's `/tmp` and `/dev/shm` are bounded: a tmpfs size, or not at all (no sandbox, or an old bubblewrap). */
  tmpLimit?: TmpLimitKind;
  warning?: string;
  bwrapPath: string;
}

const probes = new Map<string, BwrapProbe>();

/**
 * Checks once per process (per program path) that bwrap exists *and* can build the sandbox used here: inside some
 * containers user namespaces are unavailable and bwrap fails at run time.
 */
export function probeBwrap(bwrapPath = 'bwrap'): BwrapProbe {
  const cached = probes.get(bwrapPath);
  if (cached) return cached;
  const result = childProcess().spawnSync(bwrapPath, [...baseSandboxArgs(false), 'true'], {
    timeout: 10_000,
    encoding: 'utf8',
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let probe: BwrapProbe;
  if (result.error && (result.error as NodeJS.ErrnoException).code === 'ENOENT') {
    probe = {
      available: false,
      path: bwrapPath,
      reason: `bubblewrap ("${bwrapPath}") is not installed; install it (Debian/Ubuntu: apt-get install bubblewrap, Fedora: dnf install bubblewrap)`,
    };
  } else if (result.error || result.status !== 0) {
    const detail = (result.stderr ?? '').trim() || result.error?.message || `exit status ${String(result.status)}`;
    probe = {
      available: false,
      path: bwrapPath,
      reason: `bubblewrap cannot create a sandbox here (${detail}); user namespaces may be disabled in this container`,
    };
  } else {
    // Older (< 0.7) and setuid bubblewraps refuse --size: the sandbox works, its /tmp is unbounded.
    const sized = childProcess().spawnSync(bwrapPath, [...baseSandboxArgs(false, [], 1024 * 1024), 'true'], {
      timeout: 10_000,
      stdio: 'ignore',
    });
    const tmpfsSize = !sized.error && sized.status === 0;
    probe = { available: true, path: bwrapPath, reason: 'bubblewrap sandbox available', tmpfsSize };
  }
  probes.set(bwrapPath, probe);
  return probe;
}

/**
 * Resolves a sandbox mode on this machine. Throws `HarnessError('tool-unavailable')` when `bwrap` is required but
 * unusable.
 */
export function sandboxStatus(mode: SandboxMode = 'auto', bwrapPath = 'bwrap'): SandboxStatus {
  if (mode === 'none') {
    return {
      mode,
      active: false,
      requiresApproval: false,
      bwrapPath,
      processLimit: processLimitKind(false),
      memoryLimit: memoryLimitKind(false),
      tmpLimit: 'none',
      reason: "sandbox disabled (sandbox: 'none')",
      warning:
        "Sandbox disabled (sandbox: 'none'): shell commands and Python run on the host, limited only by the command policy.",
    };
  }
  const probe = probeBwrap(bwrapPath);
  if (probe.available) {
    const processLimit = processLimitKind(true);
    const memoryLimit = memoryLimitKind(true);
    const status: SandboxStatus = {
      mode,
      active: true,
      requiresApproval: false,
      bwrapPath,
      reason: probe.reason,
      processLimit,
      memoryLimit,
      tmpLimit: probe.tmpfsSize ? 'tmpfs-size' : 'none',
    };
    const gaps: string[] = [];
    if (processLimit === 'none') {
      gaps.push(
        'cannot limit the number of processes here (running as root without a writable pids cgroup): a fork bomb ' +
          'in a command can exhaust the machine until its timeout',
      );
    }
    if (memoryLimit === 'none') {
      gaps.push('cannot limit memory here (no writable memory cgroup, no prlimit): a command can use all of it');
    }
    if (!probe.tmpfsSize) {
      gaps.push(
        `cannot cap the size of its /tmp (${bwrapPath} refuses --size: older than 0.7, or setuid): a command can ` +
          'fill memory through /tmp',
      );
    }
    if (gaps.length) status.warning = `The sandbox ${gaps.join('; it ')}.`;
    return status;
  }
  if (mode === 'bwrap') {
    throw new HarnessError(
      'tool-unavailable',
      `sandbox: 'bwrap' was requested but ${probe.reason}. Or pass sandbox: 'auto' or 'none'.`,
    );
  }
  return {
    mode,
    active: false,
    requiresApproval: true,
    bwrapPath,
    processLimit: processLimitKind(false),
    memoryLimit: memoryLimitKind(false),
    tmpLimit: 'none',
    reason: probe.reason,
    warning: `No sandbox: ${probe.reason}. Shell commands and Python run on the host and each one needs approval; pass sandbox: 'none' to opt out explicitly.`,
  };
}

/** Environment names treated as secrets and removed before a command runs. */
export const SECRET_ENV_PATTERN = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|PRIVATE|DATABASE_URL/i;

/**
 * A copy of `env` without variables whose names look like secrets (`OPENAI_API_KEY`, `GITHUB_TOKEN`, …); `keep` lists
 * names to keep anyway. The built-in tools no longer use it: their commands get an allow-listed environment.
 */
export function scrubEnv(env: NodeJS.ProcessEnv = process.env, keep: readonly string[] = []): Record<string, string> {
  const clean: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (SECRET_ENV_PATTERN.test(name) && !keep.includes(name)) continue;
    clean[name] = value;
  }
  return clean;
}

/** Options of {@link spawnInWorkspace}. */
export interface SpawnInWorkspaceOptions {
  workspaceRoot: string;
  cwd?: string;
  sandbox: SandboxStatus;
  /**
   * `read-only` mounts the workspace read-only (without the harness's state) and needs the sandbox: without it the
   * process is not started. `HOME` is then the sandbox's private `/tmp`.
   * @defaultValue 'read-write'
   */
  workspaceAccess?: WorkspaceAccess;
  allowNetwork: boolean;
  /** Names passed on from the harness's environment, beyond the allow-list. */
  passEnv?: readonly string[];
  /** Variables set explicitly. */
  env?: Record<string, string>;
  /** Host paths bound read-only into the sandbox (e.g. the Python installation). */
  readOnlyPaths?: readonly string[];
  /** @defaultValue {@link DEFAULT_MAX_PROCESSES} */
  maxProcesses?: number;
  /**
   * Memory the process may use, with everything it starts (memory cgroup) or each process apart (`RLIMIT_AS`), as
   * `sandbox.memoryLimit` says; `false`: no limit.
   * @defaultValue {@link DEFAULT_MAX_MEMORY_BYTES}
   */
  maxMemoryBytes?: number | false;
  /**
   * Bytes the sandbox's private `/tmp` and `/dev/shm` may each hold, where bubblewrap can cap them; `false`: no cap.
   * @defaultValue {@link DEFAULT_MAX_TMP_BYTES}
   */
  maxTmpBytes?: number | false;
  stdio?: StdioOptions;
}

/** A started command: its direct child and the means to end everything it started. */
export interface WorkspaceProcess {
  readonly child: ChildProcess;
  /** The value of `HORIZON_HARNESS_PROCESS_TOKEN` every process of this command inherits. */
  readonly token: string;
  /** The memory and `/tmp` limits the command runs under. */
  readonly limits: AppliedLimits;
  /** Processes of the command the kernel killed for going past its memory cgroup's limit, so far (0 without one). */
  oomKills(): Promise<number>;
  /** SIGKILLs the process group at once, and the token-carrying and cgroup processes as the scan finds them. */
  kill(): void;
  /** Kills everything left and releases the cgroup; call once the command has ended. */
  dispose(): Promise<void>;
}

/** Makes sure `.harness/` is a real directory, so that bwrap can bind it read-only and no symlink stands in for it. */
function ensureStateDir(root: string): void {
  const dir = path.join(root, HARNESS_STATE_DIR);
  try {
    mkdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  if (!lstatSync(dir).isDirectory()) {
    throw new HarnessError(
      'policy-denied',
      `The workspace's "${HARNESS_STATE_DIR}" is not a directory (a symlink or file stands there), so the sandbox cannot protect it; remove it and retry.`,
    );
  }
}

/**
 * Spawns a program in the workspace, inside bwrap when the sandbox is active, with the allow-listed environment,
 * tagged with a per-call token, in a pids cgroup or under `RLIMIT_NPROC` when available, and as the leader of its
 * own process group.
 */
export function spawnInWorkspace(
  command: string,
  args: readonly string[],
  options: SpawnInWorkspaceOptions,
): WorkspaceProcess {
  const root = options.workspaceRoot;
  const cwd = options.cwd ?? root;
  const active = options.sandbox.active;
  const readOnly = options.workspaceAccess === 'read-only';
  if (readOnly && !active) {
    throw new HarnessError(
      'tool-unavailable',
      `A read-only workspace needs the bubblewrap sandbox, and it is not active (${options.sandbox.reason}); the command was not run.`,
    );
  }
  if (active) ensureStateDir(root);
  const limits = appliedLimits(options);
  const containment = new Containment(
    options.sandbox.processLimit,
    options.maxProcesses ?? DEFAULT_MAX_PROCESSES,
    limits.memory ?? { kind: 'none', maxBytes: 0 },
  );
  const env = {
    ...commandEnv({
      workspaceRoot: root,
      sandboxed: active,
      passEnv: options.passEnv,
      env: options.env,
      ...(readOnly ? { home: '/tmp' } : {}),
    }),
    [PROCESS_TOKEN_ENV]: containment.token,
  };
  const inner = containment.innerCommand([command, ...args]);
  const argv = active
    ? [
        options.sandbox.bwrapPath,
        ...sandboxArgs({
          workspaceRoot: root,
          workspaceAccess: options.workspaceAccess,
          cwd,
          allowNetwork: options.allowNetwork,
          readOnlyPaths: options.readOnlyPaths,
          ...(limits.tmpBytes === undefined ? {} : { tmpBytes: limits.tmpBytes }),
        }),
        '--',
        ...inner,
      ]
    : inner;
  const [program, ...rest] = containment.outerCommand(argv) as [string, ...string[]];
  const child = childProcess().spawn(program, rest, {
    cwd,
    env,
    detached: true,
    stdio: options.stdio ?? ['ignore', 'pipe', 'pipe'],
  });
  const kill = (): void => {
    killProcessTree(child);
    // The rest is found by scanning /proc, asynchronously; `dispose()` waits for it.
    void containment.killAll();
  };
  return {
    child,
    token: containment.token,
    limits,
    oomKills: () => containment.oomKills(),
    kill,
    dispose: () => containment.dispose(),
  };
}

/** The limits a spawn gets: its options (or the defaults), as far as this machine and sandbox can enforce them. */
function appliedLimits(options: SpawnInWorkspaceOptions): AppliedLimits {
  const { sandbox } = options;
  const limits: AppliedLimits = {};
  const memoryBytes = options.maxMemoryBytes ?? DEFAULT_MAX_MEMORY_BYTES;
  const kind = sandbox.memoryLimit ?? memoryLimitKind(sandbox.active);
  // RLIMIT_AS is set by prlimit inside the sandbox's user namespace; a status that says 'rlimit' without one is stale.
  if (memoryBytes !== false && (kind === 'cgroup' || (kind === 'rlimit' && sandbox.active))) {
    limits.memory = { kind, maxBytes: memoryBytes };
  }
  const tmpBytes = options.maxTmpBytes ?? DEFAULT_MAX_TMP_BYTES;
  if (tmpBytes !== false && sandbox.active) {
    const tmpLimit = sandbox.tmpLimit ?? (probeBwrap(sandbox.bwrapPath).tmpfsSize ? 'tmpfs-size' : 'none');
    if (tmpLimit === 'tmpfs-size') limits.tmpBytes = tmpBytes;
  }
  return limits;
}

/** Kills a process and its whole process group (spawned with `detached: true`). */
export function killProcessTree(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // The group is already gone; fall back to the process itself.
    try {
      child.kill('SIGKILL');
    } catch {
      // Already exited.
    }
  }
}
