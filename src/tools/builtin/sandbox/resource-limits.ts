/**
 * The memory and `/tmp` limits of sandboxed commands: their defaults, and how a command that ran into one is told
 * apart from one that failed on its own, so that the tool can say which limit it hit and which option raises it.
 * @module
 */
import { statfs } from 'node:fs/promises';
import { z } from 'zod';
import type { MemoryLimitKind } from './containment.js';

/**
 * Memory one command (or one Python session) may use: with a memory cgroup, all its processes together; with
 * `RLIMIT_AS`, the address space of each process.
 * @defaultValue 4 GiB
 */
export const DEFAULT_MAX_MEMORY_BYTES = 4 * 1024 ** 3;

/**
 * Size of the sandbox's private `/tmp`, and separately of its `/dev/shm`.
 * @defaultValue 1 GiB
 */
export const DEFAULT_MAX_TMP_BYTES = 1024 ** 3;

/** How the sandbox's `/tmp` and `/dev/shm` are bounded: a tmpfs with a size (bubblewrap ≥ 0.7), or not at all. */
export type TmpLimitKind = 'tmpfs-size' | 'none';

// Below these a Python interpreter or a shell cannot start, so a smaller limit is a mistake rather than a choice.
const MIN_MEMORY_BYTES = 64 * 1024 ** 2;
const MIN_TMP_BYTES = 1024 ** 2;

/** The zod schemas of the `maxMemoryBytes` and `maxTmpBytes` tool options (`false` turns a limit off). @internal */
export const resourceLimitOptions = {
  maxMemoryBytes: z.union([z.number().int().min(MIN_MEMORY_BYTES), z.literal(false)]).default(DEFAULT_MAX_MEMORY_BYTES),
  maxTmpBytes: z.union([z.number().int().min(MIN_TMP_BYTES), z.literal(false)]).default(DEFAULT_MAX_TMP_BYTES),
};

/** The limits one sandboxed process was started under. */
export interface AppliedLimits {
  /** Bytes, and how they are enforced; undefined when memory is not limited. */
  memory?: { kind: Exclude<MemoryLimitKind, 'none'>; maxBytes: number };
  /** Bytes each of `/tmp` and `/dev/shm` may hold; undefined when they are not limited. */
  tmpBytes?: number;
}

/** `4 GiB`, `512 MiB`, `1.5 GiB`, `123456 bytes`. */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (bytes >= size) {
      const value = bytes / size;
      return `${Number.isInteger(value) ? value : value.toFixed(1)} ${unit}`;
    }
  }
  return `${bytes} bytes`;
}

// What programs print when an allocation fails: Python, glibc's strerror(ENOMEM), bash's xmalloc, C++, Node, Java.
const OUT_OF_MEMORY =
  /\bMemoryError\b|Cannot allocate memory|cannot allocate \d+ bytes|std::bad_alloc|out of memory|OutOfMemoryError/i;
// strerror(ENOSPC), its errno name, and Python's OSError for it.
const NO_SPACE = /No space left on device|\bENOSPC\b|\[Errno 28\]/;
// Free space below which the workspace's own file system counts as full, so that ENOSPC may be its doing.
const FULL_DISK_BYTES = 64 * 1024 ** 2;

/** What a limit message needs to name: the tool, and the factory whose options set the limits. */
export interface LimitContext {
  tool: string;
  factory: string;
  workspaceRoot: string;
}

/**
 * The message that says which sandbox limit a finished command ran into, or undefined when it hit none as far as
 * can be told. A memory cgroup counts the kernel's OOM kills (`oomKills` since the command started), so that case is
 * certain; under `RLIMIT_AS` and for `/tmp` the command's output must show the failure (an allocation error, "No space
 * left on device" while the workspace's own disk has room).
 */
export async function limitHitMessage(
  limits: AppliedLimits,
  oomKills: number,
  output: string,
  context: LimitContext,
): Promise<string | undefined> {
  const { tool, factory } = context;
  const { memory, tmpBytes } = limits;
  const raise = (option: string) => `or have the host raise the option ${option} of ${factory}`;
  if (memory?.kind === 'cgroup' && oomKills > 0) {
    return (
      `${tool} went past the sandbox's memory limit of ${formatBytes(memory.maxBytes)} (option maxMemoryBytes, ` +
      `for all its processes together) and the kernel killed ${oomKills === 1 ? 'a process' : `${oomKills} processes`} ` +
      `of it. Use less memory at once (process the data in chunks, free what is no longer needed), ${raise('maxMemoryBytes')}.`
    );
  }
  if (memory?.kind === 'rlimit' && OUT_OF_MEMORY.test(output)) {
    return (
      `${tool} ran out of memory under the sandbox's limit of ${formatBytes(memory.maxBytes)} of address space per ` +
      `process (option maxMemoryBytes, enforced as RLIMIT_AS): an allocation failed. Use less memory at once ` +
      `(process the data in chunks, free what is no longer needed), ${raise('maxMemoryBytes')}.`
    );
  }
  if (tmpBytes !== undefined && NO_SPACE.test(output) && !(await diskFull(context.workspaceRoot))) {
    return (
      `${tool} ran out of space in the sandbox's /tmp or /dev/shm, each limited to ${formatBytes(tmpBytes)} ` +
      `(option maxTmpBytes). Write large files into the workspace instead, ${raise('maxTmpBytes')}.`
    );
  }
  return undefined;
}

/** True when the workspace's file system has (almost) no room left: then "no space" is the disk, not `/tmp`. */
async function diskFull(root: string): Promise<boolean> {
  try {
    const info = await statfs(root);
    return info.bavail * info.bsize < FULL_DISK_BYTES;
  } catch {
    return false;
  }
}
