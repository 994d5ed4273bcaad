/**
 * Sandboxing of shell commands and Python with bubblewrap (`bwrap`): the workspace read-write at its own path,
 * the rest of the file system read-only, a fresh `/tmp`, `/proc` and `/dev`, no network unless allowed, the
 * environment scrubbed of secrets, and the whole process tree killed with its parent.
 * @module
 */
import { spawn, spawnSync, type ChildProcess, type StdioOptions } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { HarnessError } from '../../errors.js';

/** `auto`: bwrap when it works here, else no sandbox and every command needs approval; `bwrap`: require it; `none`: run on the host (explicit opt-out). */
export type SandboxMode = 'auto' | 'bwrap' | 'none';

/** Whether bwrap can create a sandbox on this machine. */
export interface BwrapProbe {
  available: boolean;
  /** The program that was tried. */
  path: string;
  /** Why it is (un)available, with what to do. */
  reason: string;
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
  const result = spawnSync(
    bwrapPath,
    ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--unshare-net', '--unshare-pid', '--die-with-parent', 'true'],
    { timeout: 10_000, encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] },
  );
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
    probe = { available: true, path: bwrapPath, reason: 'bubblewrap sandbox available' };
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
      reason: "sandbox disabled (sandbox: 'none')",
      warning: "Sandbox disabled (sandbox: 'none'): shell commands and Python run on the host, limited only by the command policy.",
    };
  }
  const probe = probeBwrap(bwrapPath);
  if (probe.available) return { mode, active: true, requiresApproval: false, bwrapPath, reason: probe.reason };
  if (mode === 'bwrap') {
    throw new HarnessError('tool-unavailable', `sandbox: 'bwrap' was requested but ${probe.reason}. Or pass sandbox: 'auto' or 'none'.`);
  }
  return {
    mode,
    active: false,
    requiresApproval: true,
    bwrapPath,
    reason: probe.reason,
    warning: `No sandbox: ${probe.reason}. Shell commands and Python run on the host and each one needs approval; pass sandbox: 'none' to opt out explicitly.`,
  };
}

/** Environment names treated as secrets and removed before a command runs. */
export const SECRET_ENV_PATTERN = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|PRIVATE|DATABASE_URL/i;

/** A copy of `env` without variables whose names look like secrets (`OPENAI_API_KEY`, `GITHUB_TOKEN`, …); `keep` lists names to keep anyway. */
export function scrubEnv(env: NodeJS.ProcessEnv = process.env, keep: readonly string[] = []): Record<string, string> {
  const clean: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (SECRET_ENV_PATTERN.test(name) && !keep.includes(name)) continue;
    clean[name] = value;
  }
  return clean;
}

/** Options of {@link sandboxArgs}. */
export interface SandboxArgsOptions {
  /** Absolute real path of the workspace; bound read-write at the same path. */
  workspaceRoot: string;
  /** Working directory inside the sandbox (defaults to the workspace). */
  cwd?: string;
  allowNetwork: boolean;
}

/** The bwrap arguments (before `--` and the command) for a command in the workspace. */
export function sandboxArgs(options: SandboxArgsOptions): string[] {
  const args = [
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    '--tmpfs', '/tmp',
    // Bound after the fresh /tmp so that a workspace under /tmp stays the real directory.
    '--bind', options.workspaceRoot, options.workspaceRoot,
    '--chdir', options.cwd ?? options.workspaceRoot,
    '--unshare-pid',
    '--unshare-ipc',
    '--die-with-parent',
    '--new-session',
  ];
  if (!options.allowNetwork) args.push('--unshare-net');
  return args;
}

/** Options of {@link spawnInWorkspace}. */
export interface SpawnInWorkspaceOptions {
  workspaceRoot: string;
  cwd?: string;
  sandbox: SandboxStatus;
  allowNetwork: boolean;
  env: Record<string, string>;
  stdio?: StdioOptions;
}

/**
 * Spawns a program in the workspace, inside bwrap when the sandbox is active, as the leader of its own process
 * group so that {@link killProcessTree} can end everything it started.
 */
export function spawnInWorkspace(command: string, args: readonly string[], options: SpawnInWorkspaceOptions): ChildProcess {
  const cwd = options.cwd ?? options.workspaceRoot;
  const env = options.sandbox.active
    ? { ...options.env, TMPDIR: '/tmp', MPLCONFIGDIR: '/tmp/.matplotlib', XDG_CACHE_HOME: '/tmp/.cache' }
    : options.env;
  const [program, argv] = options.sandbox.active
    ? [options.sandbox.bwrapPath, [...sandboxArgs({ workspaceRoot: options.workspaceRoot, cwd, allowNetwork: options.allowNetwork }), '--', command, ...args]]
    : [command, [...args]];
  return spawn(program, argv, { cwd, env, detached: true, stdio: options.stdio ?? ['ignore', 'pipe', 'pipe'] });
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

const SKIP_DIRS = new Set(['.git', 'node_modules', '__pycache__', '.ipynb_checkpoints', '.venv']);
const MAX_SNAPSHOT_FILES = 50_000;

/** Workspace-relative path → `mtime:size` of every regular file (symlinks and tool caches skipped). */
export async function snapshotFiles(root: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const walk = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (files.size >= MAX_SNAPSHOT_FILES) return;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name)) await walk(full);
      } else if (entry.isFile()) {
        try {
          const info = await stat(full);
          files.set(path.relative(root, full).split(path.sep).join('/'), `${info.mtimeMs}:${info.size}`);
        } catch {
          // Deleted between readdir and stat.
        }
      }
    }
  };
  await walk(root);
  return files;
}

/** Files that are new or changed between two snapshots, sorted. */
export function changedFiles(before: Map<string, string>, after: Map<string, string>): string[] {
  return [...after].filter(([file, sig]) => before.get(file) !== sig).map(([file]) => file).sort();
}
