/**
 * Workspace fingerprints: what an audit may not change. Taken before and after every audit; any difference is an
 * integrity violation, whoever caused it (a `readOnly` tool that writes, an external auditor agent that edits files).
 * Symbolic links are fingerprinted with what they point to, and a link that leaves the workspace or enters `.harness/`
 * is marked, since what it shows is outside what the fingerprint watches.
 * @module
 */
import { createReadStream } from 'node:fs';
import { lstat, readlink, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { HARNESS_DIR, walkWorkspace, type WalkEntry } from './workspace-walk.js';

/**
 * Workspace-relative path → what it is: `file:<size>:<sha256>`, `dir`, `other`, or for a symbolic link
 * `link:<where>:<target as JSON>:<print of what it points to>`, where `<where>` is `inside`, `outside` (it leads out
 * of the workspace), `harness` (into `.harness/`) or `dangling`.
 */
export type Fingerprint = ReadonlyMap<string, string>;

/** Where a symbolic link leads. */
type LinkWhere = 'inside' | 'outside' | 'harness' | 'dangling';

/**
 * Fingerprints every file (size and sha256), directory and symbolic link (its target, and the content it leads to)
 * under `root`, except the harness's own `.harness/` folder. Content is hashed, never judged by modification time,
 * which a process can reset.
 */
export async function fingerprintWorkspace(root: string): Promise<Fingerprint> {
  const realRoot = await realpath(root);
  const prints = new Map<string, string>();
  for await (const entry of walkWorkspace(root)) await addPrint(prints, realRoot, entry);
  return prints;
}

/**
 * Files the harness itself writes under `.harness/` while a role runs: the memory layer's saved outputs (discarded
 * around every stage) and the run's event log; with `snapshot`, also the run's snapshot and the temporary files of its
 * atomic writes and its journal, which the built-in executor saves between its steps (sealed: a resume refuses what it
 * did not write).
 */
function writtenByHarness(snapshot: boolean): (relative: string) => boolean {
  return (relative) => {
    const inside = relative.slice(HARNESS_DIR.length + 1);
    if (inside === 'outputs' || inside === 'events.jsonl') return true;
    return snapshot && (inside === 'run.json' || inside === 'run.journal' || /^\.run\.json\..+\.tmp$/.test(inside));
  };
}

/**
 * Fingerprints the harness's own `.harness/` folder (paths as `.harness/…`), except what the harness writes there
 * itself while a role runs (see {@link writtenByHarness}; `savesSnapshots`: the role's loop saves snapshots): any
 * other change during a round was made by someone else.
 */
export async function fingerprintHarnessState(root: string, savesSnapshots = false): Promise<Fingerprint> {
  const realRoot = await realpath(root);
  const prints = new Map<string, string>();
  const dir = path.join(root, HARNESS_DIR);
  for await (const entry of walkWorkspace(root, dir, writtenByHarness(savesSnapshots))) {
    await addPrint(prints, realRoot, entry);
  }
  return prints;
}

async function addPrint(prints: Map<string, string>, realRoot: string, entry: WalkEntry): Promise<void> {
  try {
    prints.set(entry.path, await printOf(realRoot, entry));
  } catch {
    // Removed between listing and reading: absent from this fingerprint, which is what it is now.
  }
}

async function printOf(realRoot: string, entry: WalkEntry): Promise<string> {
  switch (entry.kind) {
    case 'file':
      return filePrint(entry.absolute, (await lstat(entry.absolute)).size);
    case 'directory':
      return 'dir';
    case 'other':
      return 'other';
    case 'symlink':
      return linkPrint(realRoot, entry.absolute);
  }
}

async function filePrint(file: string, size: number): Promise<string> {
  return `file:${size}:${await sha256(file)}`;
}

/** A link's print: where it leads, its target, and the print of what is there (followed once, to its end). */
async function linkPrint(realRoot: string, link: string): Promise<string> {
  const target = await readlink(link);
  let resolved: string;
  try {
    resolved = await realpath(link);
  } catch {
    return `link:dangling:${JSON.stringify(target)}:`;
  }
  const where = whereIs(realRoot, resolved);
  const info = await stat(resolved);
  const print = info.isFile() ? await filePrint(resolved, info.size) : info.isDirectory() ? 'dir' : 'other';
  return `link:${where}:${JSON.stringify(target)}:${print}`;
}

function whereIs(realRoot: string, resolved: string): LinkWhere {
  const relative = path.relative(realRoot, resolved);
  if (relative === '') return 'inside';
  if (relative.startsWith('..') || path.isAbsolute(relative)) return 'outside';
  const first = relative.split(path.sep)[0] ?? '';
  return first.toLowerCase() === HARNESS_DIR ? 'harness' : 'inside';
}

/** Links in `fingerprint` that lead out of the workspace or into `.harness/`, as `path -> target`, sorted. */
export function escapingLinks(fingerprint: Fingerprint): string[] {
  const found: string[] = [];
  for (const [file, print] of fingerprint) {
    const match = /^link:(outside|harness):("(?:[^"\\]|\\.)*")/.exec(print);
    if (match) found.push(`${file} -> ${JSON.parse(match[2] as string) as string}`);
  }
  return found.sort();
}

/** Paths created, changed or removed between two fingerprints, sorted. */
export function diffFingerprints(before: Fingerprint, after: Fingerprint): string[] {
  const changed = new Set<string>();
  for (const [file, print] of after) if (before.get(file) !== print) changed.add(file);
  for (const file of before.keys()) if (!after.has(file)) changed.add(file);
  return [...changed].sort();
}

/**
 * The paths of `fingerprint` that `texts` cite: a path counts when it appears with no path character right before or
 * after it (`VERSION` in "VERSION holds 1.2.0", not in "VERSIONS").
 */
export function citedPaths(texts: readonly string[], fingerprint: Fingerprint): string[] {
  const cited: string[] = [];
  const pathChar = /[\w./-]/;
  for (const file of fingerprint.keys()) {
    const found = texts.some((text) => {
      for (let at = text.indexOf(file); at !== -1; at = text.indexOf(file, at + 1)) {
        const before = text[at - 1];
        // A full stop ends a sentence when no path character follows it.
        const end = text[at + file.length] === '.' ? at + file.length + 1 : at + file.length;
        const after = text[end];
        if ((!before || !pathChar.test(before)) && (!after || !pathChar.test(after))) return true;
      }
      return false;
    });
    if (found) cited.push(file);
  }
  return cited.sort();
}

/** Which of `paths` differ now from their print in `before` (absent now counts as changed). */
export async function changedNow(root: string, paths: readonly string[], before: Fingerprint): Promise<string[]> {
  const realRoot = await realpath(root);
  const changed: string[] = [];
  for (const relative of paths) {
    const absolute = path.join(root, ...relative.split('/'));
    let now: string | undefined;
    try {
      const info = await lstat(absolute);
      const kind = info.isSymbolicLink()
        ? 'symlink'
        : info.isDirectory()
          ? 'directory'
          : info.isFile()
            ? 'file'
            : 'other';
      now = await printOf(realRoot, { path: relative, absolute, kind });
    } catch {
      now = undefined;
    }
    if (now !== before.get(relative)) changed.push(relative);
  }
  return changed;
}

async function sha256(file: string): Promise<string> {
  // node:crypto on first use rather than with the package.
  const hash = process.getBuiltinModule('node:crypto').createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
