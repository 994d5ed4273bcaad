/**
 * Directories a run must never work in. A workspace is where the model's tools write, and the sandbox mounts it
 * read-write: `/`, `/etc` or a home directory as a workspace would hand the system or the user's files to the model,
 * and the harness's own install directory would let it rewrite the harness.
 * @module
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { HarnessError } from '../errors.js';

/** System trees: no directory in them may be a workspace. */
const SYSTEM_TREES = ['/etc', '/usr', '/bin', '/sbin', '/boot', '/dev', '/proc', '/sys'];
/** `/lib`, `/lib32`, `/lib64`, `/libx32`: system trees too. */
const LIB_TREE = /^\/lib(32|64|x32)?$/;
/** Directories that may hold a workspace but never be one. */
const SHARED_ROOTS = ['/', '/var', '/root', '/home', '/tmp', '/run', '/mnt', '/media', '/opt', '/srv'];

/** The real path of `dir`, or, while it does not exist yet, of its nearest existing ancestor joined with the rest. */
function realPathOf(dir: string): string {
  const absolute = path.resolve(dir);
  const rest: string[] = [];
  let current = absolute;
  while (!existsSync(current) && path.dirname(current) !== current) {
    rest.unshift(path.basename(current));
    current = path.dirname(current);
  }
  try {
    return path.join(realpathSync(current), ...rest);
  } catch {
    return absolute;
  }
}

const realOrSame = (dir: string): string => {
  try {
    return realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
};

const isInside = (dir: string, tree: string): boolean => dir === tree || dir.startsWith(`${tree}${path.sep}`);

let installDir: string | undefined;

/**
 * The directory of the harness's own package: the nearest ancestor of this module with a package.json named
 * `horizon-harness`, or this module's directory when the code was bundled into something else.
 */
function harnessInstallDir(): string {
  if (installDir !== undefined) return installDir;
  const moduleDir = path.dirname(fileURLToPath(import.meta.url));
  let current = moduleDir;
  for (let up = 0; up < 8; up += 1) {
    try {
      const manifest = JSON.parse(readFileSync(path.join(current, 'package.json'), 'utf8')) as { name?: unknown };
      if (manifest.name === 'horizon-harness') {
        installDir = realOrSame(current);
        return installDir;
      }
    } catch {
      // No package.json here: look further up.
    }
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  installDir = realOrSame(moduleDir);
  return installDir;
}

/** Why `real` (a real, absolute path) cannot be a workspace, or undefined when it can. */
function reasonAgainst(real: string): string | undefined {
  const tree = SYSTEM_TREES.find((system) => isInside(real, system) || isInside(real, realOrSame(system)));
  const top = `/${real.split(path.sep)[1] ?? ''}`;
  if (tree !== undefined || LIB_TREE.test(top)) return 'a system directory';
  if (SHARED_ROOTS.some((shared) => real === shared || real === realOrSame(shared))) return 'a shared system directory';
  const home = realOrSame(os.homedir());
  if (real === home) return 'your home directory itself';
  if (isInside(home, real)) return 'a directory that holds your home directory';
  if (real === realOrSame(os.tmpdir())) return 'the temporary directory itself';
  const install = harnessInstallDir();
  if (isInside(real, install)) return "inside the harness's own install directory";
  if (isInside(install, real)) return "a directory that holds the harness's own install directory";
  return undefined;
}

/**
 * Throws `invalid-options` when `dir` (followed through links, also while it does not exist yet) is a system
 * directory (`/`, anything in `/etc`, `/usr`, `/bin`, `/sbin`, `/lib*`, `/boot`, `/dev`, `/proc`, `/sys`; `/var`,
 * `/root`, `/home`, `/tmp` themselves), the home directory itself or one holding it, the temporary directory itself,
 * or the harness's install directory, a directory in it or one holding it.
 * @internal
 */
export function assertSafeWorkspaceDir(dir: string): void {
  const real = realPathOf(dir);
  const reason = reasonAgainst(real);
  if (reason === undefined) return;
  const shown = real === path.resolve(dir) ? `"${dir}"` : `"${dir}" (${real})`;
  const example = path.join(os.homedir(), 'agent-work', 'my-task');
  throw new HarnessError(
    'invalid-options',
    `The workspace ${shown} is ${reason}: a run's tools write there and its sandbox mounts it read-write, so it is ` +
      `refused. Pass a dedicated directory for the run (e.g. "${example}"), or leave \`workspace\` out for a fresh ` +
      'temporary one.',
  );
}
