/**
 * Run ids as file names of `FileRunStore({ dir })`: encoded so that no id can name a file outside the directory, and
 * decoded back when the store lists its runs.
 * @module
 */

/** A run id as a file name: lower-case letters, digits, `_` and `-` as they are, every other byte as `%xx`. @internal */
export function encodeRunId(runId: string): string {
  let encoded = '';
  for (const byte of Buffer.from(runId, 'utf8')) {
    const char = String.fromCharCode(byte);
    encoded += /[a-z0-9_-]/.test(char) ? char : `%${byte.toString(16).padStart(2, '0')}`;
  }
  return encoded;
}

/** The run id a file of the store is named for; `undefined` for temp files and anything this store did not name. @internal */
export function runIdOf(name: string): string | undefined {
  if (!name.endsWith('.json')) return undefined;
  const stem = name.slice(0, -'.json'.length);
  try {
    const runId = decodeURIComponent(stem);
    return runId !== '' && encodeRunId(runId) === stem ? runId : undefined;
  } catch {
    return undefined;
  }
}
