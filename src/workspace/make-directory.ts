/**
 * Creating a directory and its missing parents one level at a time.
 * @module
 */
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { errnoCode } from './file-errors.js';

/**
 * Creates `directory` and any missing parents, and fails when it cannot.
 *
 * Node 20's `mkdir(dir, { recursive: true })` never returns for a parent that exists but refuses new entries with
 * ENOENT (`/proc/1/nope`): it loops on a thread of the pool forever. Here the nearest existing ancestor is found
 * with `stat`, then each missing level is made with a plain `mkdir`, so every refusal surfaces as an error.
 * @returns true when the directory had to be created
 * @internal
 */
export async function makeDirectory(directory: string): Promise<boolean> {
  const missing: string[] = [];
  for (let current = path.resolve(directory); ; current = path.dirname(current)) {
    const existing = await stat(current).catch((error: unknown) => {
      if (errnoCode(error) === 'ENOENT') return undefined;
      throw error;
    });
    if (existing) {
      if (!existing.isDirectory())
        throw Object.assign(new Error(`"${current}" is not a directory`), { code: 'ENOTDIR' });
      break;
    }
    missing.unshift(current);
    if (path.dirname(current) === current) break;
  }
  for (const level of missing) {
    await mkdir(level).catch(async (error: unknown) => {
      // Another process may have made the same level meanwhile; only a directory there is good enough.
      if (errnoCode(error) !== 'EEXIST' || !(await stat(level)).isDirectory()) throw error;
    });
  }
  return missing.length > 0;
}
