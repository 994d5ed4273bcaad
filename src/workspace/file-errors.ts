import { HarnessError } from '../errors.js';

/** The `code` of a Node.js system error (`ENOENT`, …), if it has one. @internal */
export function errnoCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

/** Turns a file-system failure on a workspace path into a HarnessError that says what to do. @internal */
export function fileError(error: unknown, requested: string): HarnessError {
  if (HarnessError.isInstance(error)) return error;
  const messages: Record<string, string> = {
    ENOENT: `"${requested}" does not exist in the workspace. Check the path (list files with a shell or Python tool).`,
    EISDIR: `"${requested}" is a directory, not a file. Give the path of a file inside it.`,
    ENOTDIR: `A parent of "${requested}" is a file, not a directory. Choose another path.`,
    EEXIST: `A parent of "${requested}" is a file, not a directory. Choose another path.`,
    EACCES: `Permission denied for "${requested}".`,
    EPERM: `Permission denied for "${requested}".`,
    ENAMETOOLONG: `The path "${requested}" is too long. Use a shorter name.`,
    // From opening with O_NOFOLLOW or O_NONBLOCK (safe-fs.ts): something replaced the file after it was checked.
    ELOOP: `"${requested}" is a symbolic link; workspace files are not opened through links. Use another path.`,
    ENXIO: `"${requested}" is not a regular file (a FIFO, socket or device); it cannot be opened. Use another path.`,
  };
  const message = messages[errnoCode(error) ?? ''];
  return message
    ? new HarnessError('invalid-input', message, { cause: error })
    : new HarnessError('internal', `File operation on "${requested}" failed: ${String(error)}`, { cause: error });
}
