import type { Stats } from 'node:fs';
import { lstat, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { HarnessError } from '../errors.js';

/** True when `candidate` (an absolute, normalized path) is `root` or lies below it. */
export function isInside(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

function refuse(requested: string, why: string): HarnessError {
  return new HarnessError(
    'path-outside-workspace',
    `Refused path "${requested}": ${why}. Use a relative path inside the workspace, such as "notes/report.md".`,
  );
}

function errnoCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

/**
 * Resolves a workspace-relative path to an absolute path inside `root` (a real path), following
 * symbolic links one component at a time so that a link anywhere along the way that leads outside is refused.
 * @internal
 */
export async function resolveInside(root: string, requested: string, intent: 'read' | 'write'): Promise<string> {
  if (typeof requested !== 'string' || requested.trim() === '') {
    throw new HarnessError(
      'invalid-input',
      'The path is empty. Give a workspace-relative path such as "notes/report.md".',
    );
  }
  if (requested.includes('\0')) throw refuse(requested, 'it contains a NUL byte');
  if (path.isAbsolute(requested) || /^[a-zA-Z]:[\\/]/.test(requested) || requested.startsWith('\\')) {
    throw refuse(requested, 'absolute paths are not allowed');
  }
  // Backslashes count as separators too, so "..\\x" cannot slip past the check on POSIX systems.
  const segments = requested.split(/[\\/]+/).filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) throw refuse(requested, '".." segments are not allowed');
  if (segments.length === 0) {
    if (intent === 'write') throw refuse(requested, 'it names the workspace directory itself, not a file');
    return root;
  }

  let current = root;
  for (let index = 0; index < segments.length; index += 1) {
    const next = path.join(current, segments[index] as string);
    const walked = segments.slice(0, index + 1).join('/');
    let stats: Stats;
    try {
      stats = await lstat(next);
    } catch (error) {
      if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR') {
        // Nothing exists from here on, so the remaining segments are plain names below a checked directory.
        return path.join(next, ...segments.slice(index + 1));
      }
      throw error;
    }
    if (!stats.isSymbolicLink()) {
      current = next;
      continue;
    }
    let target: string;
    try {
      target = await realpath(next);
    } catch (error) {
      if (errnoCode(error) === 'ELOOP') {
        throw new HarnessError(
          'invalid-input',
          `The path "${requested}" cannot be used: "${walked}" is a loop of symbolic links. Use another path, or replace the link.`,
        );
      }
      if (errnoCode(error) !== 'ENOENT') throw error;
      const pointsTo = path.resolve(path.dirname(next), await readlink(next));
      if (!isInside(root, pointsTo)) {
        throw refuse(requested, `"${walked}" is a dangling symbolic link that points outside the workspace`);
      }
      if (intent === 'write') {
        throw refuse(requested, `"${walked}" is a dangling symbolic link; writing through it is not allowed`);
      }
      return path.join(next, ...segments.slice(index + 1));
    }
    if (!isInside(root, target)) {
      throw refuse(requested, `"${walked}" is a symbolic link that points outside the workspace`);
    }
    current = target;
  }
  return current;
}
