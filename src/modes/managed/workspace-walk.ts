/**
 * Walking a workspace directory without following symbolic links and without the harness's own `.harness/` folder.
 * @module
 */
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';

/** The harness's own folder (task state, saved outputs, answers): it changes during every round by design. */
export const HARNESS_DIR = '.harness';

/** One entry of a walk. */
export interface WalkEntry {
  /** Workspace-relative path with forward slashes. */
  path: string;
  absolute: string;
  kind: 'file' | 'directory' | 'symlink' | 'other';
}

/**
 * Every entry under `dir` (absolute, inside `root`), depth first in name order, `.harness/` at the root skipped, and
 * so is every path `skip` names (workspace-relative). Symbolic links are reported, never followed; unreadable
 * directories are skipped.
 */
export async function* walkWorkspace(
  root: string,
  dir: string = root,
  skip: (relative: string) => boolean = () => false,
): AsyncGenerator<WalkEntry> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const absolute = path.join(dir, entry.name);
    const relative = path.relative(root, absolute).split(path.sep).join('/');
    if (relative === HARNESS_DIR || skip(relative)) continue;
    const kind = entry.isSymbolicLink()
      ? 'symlink'
      : entry.isDirectory()
        ? 'directory'
        : entry.isFile()
          ? 'file'
          : 'other';
    yield { path: relative, absolute, kind };
    if (kind === 'directory') yield* walkWorkspace(root, absolute, skip);
  }
}
