/**
 * Intake: the run's attachments copied into its workspace under `attachments/`, for either mode.
 * @module
 */
import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { toHarnessError } from '../../errors.js';
import type { Workspace } from '../../workspace/types.js';
import { StopRun } from './run-control.js';

/** Attachments copied at once: enough to hide each copy's file-system round trips, few enough to spare the pool. */
const COPY_CONCURRENCY = 8;

/**
 * Copies each attachment into `attachments/` through the workspace (same-named files get `-2`, `-3`, …) and returns
 * their workspace-relative paths, in the order given; a file that cannot be copied stops the run with `invalid-input`
 * at stage `intake` (the first such file in that order among those tried; no copy starts after a failure). Only
 * regular files are copied: each is checked with `stat` first, so a FIFO, socket, device or directory is refused
 * without being opened (opening a FIFO waits for a writer that may never come). Up to {@link COPY_CONCURRENCY} copies
 * run at once, so thousands of attachments cost their I/O, not its latency one after the other.
 */
export async function copyAttachments(workspace: Workspace, sources: readonly string[]): Promise<string[]> {
  const destinations = attachmentNames(sources);
  let next = 0;
  const failures: { index: number; error: unknown }[] = [];
  const copyNext = async (): Promise<void> => {
    while (failures.length === 0 && next < sources.length) {
      const index = next++;
      try {
        await copyOne(workspace, sources[index] as string, destinations[index] as string);
      } catch (error) {
        failures.push({ index, error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(COPY_CONCURRENCY, sources.length) }, copyNext));
  const failed = failures.sort((a, b) => a.index - b.index)[0];
  if (failed) {
    throw new StopRun(
      'error',
      {
        code: 'invalid-input',
        message: `Attachment "${sources[failed.index]}" could not be copied into the workspace: ${toHarnessError(failed.error).message}`,
      },
      'intake',
    );
  }
  return destinations;
}

async function copyOne(workspace: Workspace, source: string, dest: string): Promise<void> {
  const absolute = path.resolve(source);
  const kind = nonFileKind(await stat(absolute));
  if (kind) throw new Error(`it is ${kind}, not a regular file. Attach regular files only.`);
  await workspace.copyIn(absolute, dest, { tool: 'intake' });
}

/**
 * The workspace path of each attachment: `attachments/<basename>`, a name taken before getting `-2`, `-3`, … In time
 * linear in the attachments: each name's next suffix is remembered, so 5 000 files of one name do not try 12.5
 * million names. @internal
 */
export function attachmentNames(sources: readonly string[]): string[] {
  const used = new Set<string>();
  const nextSuffix = new Map<string, number>();
  return sources.map((source) => {
    const candidate = `attachments/${path.basename(path.resolve(source))}`;
    let name = candidate;
    if (used.has(name)) {
      const ext = path.posix.extname(candidate);
      const stem = candidate.slice(0, candidate.length - ext.length);
      let n = nextSuffix.get(candidate) ?? 2;
      for (name = `${stem}-${n}${ext}`; used.has(name); name = `${stem}-${n}${ext}`) n++;
      nextSuffix.set(candidate, n + 1);
    }
    used.add(name);
    return name;
  });
}

/** What a path is when it is not a regular file, in words; undefined for a regular file. */
function nonFileKind(stats: Stats): string | undefined {
  if (stats.isFile()) return undefined;
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'something other than a file';
}
