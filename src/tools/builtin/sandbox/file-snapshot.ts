/**
 * What a command changed in the workspace: a listing of every regular file's modification time and size before and
 * after, compared.
 * @module
 */
import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';

const SKIP_DIRS = new Set(['.git', 'node_modules', '__pycache__', '.ipynb_checkpoints', '.venv']);
const MAX_SNAPSHOT_FILES = 50_000;

/** Workspace-relative path → `mtime:size` of every regular file (symlinks and tool caches skipped). */
export async function snapshotFiles(root: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const walk = async (dir: string): Promise<void> => {
    let entries: Dirent[];
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
  return [...after]
    .filter(([file, sig]) => before.get(file) !== sig)
    .map(([file]) => file)
    .sort();
}
