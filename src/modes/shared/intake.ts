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

/**
 * Copies each attachment into `attachments/` through the workspace (same-named files get `-2`, `-3`, …) and returns
 * their workspace-relative paths; a file that cannot be copied stops the run with `invalid-input` at stage `intake`.
 * Only regular files are copied: each is checked with `stat` first, so a FIFO, socket, device or directory is
 * refused without being opened (opening a FIFO waits for a writer that may never come).
 */
export async function copyAttachments(workspace: Workspace, sources: readonly string[]): Promise<string[]> {
  const used = new Set<string>();
  const copied: string[] = [];
  for (const source of sources) {
    const absolute = path.resolve(source);
    const dest = uniqueName(`attachments/${path.basename(absolute)}`, used);
    try {
      const kind = nonFileKind(await stat(absolute));
      if (kind) throw new Error(`it is ${kind}, not a regular file. Attach regular files only.`);
      await workspace.copyIn(absolute, dest, { tool: 'intake' });
    } catch (error) {
      throw new StopRun(
        'error',
        {
          code: 'invalid-input',
          message: `Attachment "${source}" could not be copied into the workspace: ${toHarnessError(error).message}`,
        },
        'intake',
      );
    }
    copied.push(dest);
  }
  return copied;
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

function uniqueName(candidate: string, used: Set<string>): string {
  let name = candidate;
  const ext = path.posix.extname(candidate);
  const stem = candidate.slice(0, candidate.length - ext.length);
  for (let n = 2; used.has(name); n++) name = `${stem}-${n}${ext}`;
  used.add(name);
  return name;
}
