/**
 * The bubblewrap file-system view: the workspace read-write (or read-only, without the harness's state folder), the
 * system directories a program needs read-only, a small `/etc` subset, a private `/tmp`, `/dev` and `/proc` — and
 * nothing else (no home directories, no `/root`).
 * @module
 */
import { lstatSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { HARNESS_STATE_DIR } from '../../../workspace/tool-workspace.js';

// The harness's own state folder inside the workspace; sandboxed code sees it read-only.
export { HARNESS_STATE_DIR };

/** Top-level system directories bound read-only (or recreated as the same symlink, e.g. `/bin -> usr/bin`). */
const SYSTEM_DIRS = ['usr', 'bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'] as const;

/**
 * The `/etc` entries a program needs: the dynamic linker's configuration, TLS certificates, locale and time zone,
 * user and group *names* (`passwd`, `group`; never `shadow`, `gshadow` or `sudoers`), name resolution, and the
 * Debian `alternatives` symlinks many commands go through. Missing entries are skipped.
 */
export const SANDBOX_ETC_ENTRIES: readonly string[] = Object.freeze([
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'ssl/certs',
  'ssl/openssl.cnf',
  'ca-certificates',
  'ca-certificates.conf',
  'pki/tls/certs',
  'pki/ca-trust',
  'localtime',
  'timezone',
  'locale.alias',
  'locale.conf',
  'default/locale',
  'passwd',
  'group',
  'nsswitch.conf',
  'hosts',
  'resolv.conf',
  'host.conf',
  'gai.conf',
  'services',
  'protocols',
  'alternatives',
  'mime.types',
  'magic',
  'fonts',
]);

/**
 * How sandboxed code sees the workspace. `read-write`: as it is, except the harness's `.harness/` folder, which is
 * read-only. `read-only`: nothing in it can be written, and `.harness/` is an empty read-only folder, so a command can
 * inspect the work but neither change it nor read the harness's state (saved tool outputs of other roles, snapshots).
 */
export type WorkspaceAccess = 'read-write' | 'read-only';

/** Options of {@link sandboxArgs}. */
export interface SandboxArgsOptions {
  /** Absolute real path of the workspace; bound at the same path as `workspaceAccess` says. */
  workspaceRoot: string;
  /** @defaultValue 'read-write' */
  workspaceAccess?: WorkspaceAccess;
  /** Working directory inside the sandbox (defaults to the workspace). */
  cwd?: string;
  allowNetwork: boolean;
  /** More host paths bound read-only at the same path (e.g. a Python installation outside `/usr`); missing ones are skipped. */
  readOnlyPaths?: readonly string[];
  /** Bytes the private `/tmp` and `/dev/shm` may each hold (needs bubblewrap ≥ 0.7); unlimited when left out. */
  tmpBytes?: number;
}

function systemDirArgs(): string[] {
  const args: string[] = [];
  for (const name of SYSTEM_DIRS) {
    const host = `/${name}`;
    let info: ReturnType<typeof lstatSync>;
    try {
      info = lstatSync(host);
    } catch {
      continue;
    }
    if (info.isSymbolicLink()) args.push('--symlink', readlinkSync(host), host);
    else if (info.isDirectory()) args.push('--ro-bind', host, host);
  }
  return args;
}

/** A tmpfs at `dest`, of at most `sizeBytes` when given (bubblewrap ≥ 0.7 takes `--size`). */
function tmpfs(dest: string, sizeBytes: number | undefined): string[] {
  return sizeBytes === undefined ? ['--tmpfs', dest] : ['--size', String(sizeBytes), '--tmpfs', dest];
}

/**
 * The bwrap arguments of the sandbox without the workspace: system directories, `/etc` subset, fresh `/dev` (read-only
 * but for its own `/dev/shm`), `/proc`, `/tmp`, namespaces. `tmpBytes` caps `/tmp` and `/dev/shm` each.
 */
export function baseSandboxArgs(
  allowNetwork: boolean,
  readOnlyPaths: readonly string[] = [],
  tmpBytes: number | undefined = undefined,
): string[] {
  const args = [
    ...systemDirArgs(),
    ...SANDBOX_ETC_ENTRIES.flatMap((entry) => ['--ro-bind-try', `/etc/${entry}`, `/etc/${entry}`]),
    '--dev',
    '/dev',
    // bubblewrap's /dev is a tmpfs as large as the host's, writable by a sandboxed root: only /dev/shm (for POSIX
    // shared memory, e.g. Python's multiprocessing) stays writable, on a tmpfs of its own.
    ...tmpfs('/dev/shm', tmpBytes),
    '--remount-ro',
    '/dev',
    '--proc',
    '/proc',
    ...tmpfs('/tmp', tmpBytes),
    // After the fresh /tmp, which would otherwise hide a path under it (a prompt file in the host's temporary folder).
    ...readOnlyPaths.flatMap((extra) => ['--ro-bind-try', extra, extra]),
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    // As root, bwrap would otherwise hand every capability to the sandbox (mknod a disk device, mount, ptrace, …).
    '--cap-drop',
    'ALL',
    '--die-with-parent',
    '--new-session',
  ];
  if (!allowNetwork) args.push('--unshare-net');
  return args;
}

/** The bwrap arguments (before `--` and the command) for a command in the workspace. */
export function sandboxArgs(options: SandboxArgsOptions): string[] {
  const root = options.workspaceRoot;
  const state = path.join(root, HARNESS_STATE_DIR);
  const workspace =
    options.workspaceAccess === 'read-only'
      ? // Over the read-only workspace: an empty, read-only `.harness/` hides the harness's state.
        ['--ro-bind', root, root, '--tmpfs', state, '--remount-ro', state]
      : // Over the workspace bind: sandboxed code cannot change the harness's state or plant symlinks in it.
        ['--bind', root, root, '--ro-bind', state, state];
  return [
    ...baseSandboxArgs(options.allowNetwork, options.readOnlyPaths, options.tmpBytes),
    // After the fresh /tmp, so that a workspace under /tmp stays the real directory.
    ...workspace,
    '--chdir',
    options.cwd ?? root,
    // Last, once every mount point exists: the sandbox's own root (where /etc, /home, … would be) is read-only too.
    '--remount-ro',
    '/',
  ];
}
