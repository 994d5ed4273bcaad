/**
 * Executor and auditor traces are discarded after each round (LongHorizon-Harness): the memory layer saves long tool
 * outputs of a loop under `.harness/outputs/<scope>.txt` so that the loop can read them back, and no later role may
 * find them there. Before each execution and each audit, and after each audit, every saved output is removed except
 * those of the loop about to run (or going on).
 * @module
 */
import { lstat, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { OUTPUTS_DIR } from '../../memory/output-log.js';

/**
 * Removes every saved output under the workspace's `.harness/outputs/` except the logs of the scopes in `keep`
 * (`execute-3`, `claim-3`); a missing folder is nothing to remove.
 */
export async function discardTraces(root: string, keep: readonly string[] = []): Promise<void> {
  const dir = path.join(root, OUTPUTS_DIR);
  const [state, outputs] = await Promise.all([kindOf(path.dirname(dir)), kindOf(dir)]);
  // The workspace lock refuses a `.harness` that is not a real directory: nothing of the harness's is there.
  if (state !== 'directory' || outputs === 'missing') return;
  if (outputs !== 'directory') {
    // Something an external agent put in its place (a symbolic link is removed, never followed); the memory makes
    // the folder again when it next saves.
    await rm(dir, { force: true, recursive: true });
    return;
  }
  const names = await readdir(dir);
  const kept = new Set(keep.map((scope) => `${scope}.txt`));
  await Promise.all(
    names.filter((name) => !kept.has(name)).map((name) => rm(path.join(dir, name), { recursive: true, force: true })),
  );
}

async function kindOf(file: string): Promise<'missing' | 'directory' | 'other'> {
  try {
    return (await lstat(file)).isDirectory() ? 'directory' : 'other';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw error;
  }
}
