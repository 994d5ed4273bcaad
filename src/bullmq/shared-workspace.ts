/**
 * The check a run job makes before it starts: the directory its run works in must be reachable from this worker.
 * @module
 */
import { stat } from 'node:fs/promises';
import { HarnessError } from '../errors.js';

/**
 * Resolves when `dir` is an existing directory; otherwise throws `invalid-options` naming the path, the run and the
 * requirement that every worker sees the same workspace root at the same path.
 * @param what - what `dir` is, for the message: `the workspace root` or `the run's workspace`
 * @internal
 */
export async function assertSharedDirectory(dir: string, runId: string, what: string): Promise<void> {
  let problem: string | undefined;
  try {
    if (!(await stat(dir)).isDirectory()) problem = 'it is not a directory';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    problem = code === 'ENOENT' ? 'it does not exist here' : `it cannot be read (${code ?? String(error)})`;
  }
  if (problem === undefined) return;
  throw new HarnessError(
    'invalid-options',
    `Run "${runId}" cannot start on this worker: ${what} "${dir}" is unreachable (${problem}). ` +
      'Every worker must see the same workspace root at the same path (NFS, a mounted volume), ' +
      'since a run resumed on another worker goes on in the workspace it started in.',
  );
}
