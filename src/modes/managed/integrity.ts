/**
 * Workspace fingerprints: what an audit may not change. Taken before and after every audit; any difference is an
 * integrity violation, whoever caused it (a `readOnly` tool that writes, an external auditor agent that edits files).
 * @module
 */
import { createReadStream } from 'node:fs';
import { lstat, readlink } from 'node:fs/promises';
import type { AuditInput, AuditorLike, AuditOutcome } from '../../contracts/managed.js';
import { walkWorkspace } from './workspace-walk.js';

/** Workspace-relative path → what it is: `file:<size>:<sha256>`, `dir`, `link:<target>` or `other`. */
export type Fingerprint = ReadonlyMap<string, string>;

/**
 * Fingerprints every file (size and sha256), directory and symbolic link (its target) under `root`, except the
 * harness's own `.harness/` folder. Content is hashed, never judged by modification time, which a process can reset.
 */
export async function fingerprintWorkspace(root: string): Promise<Fingerprint> {
  const prints = new Map<string, string>();
  for await (const entry of walkWorkspace(root)) {
    try {
      if (entry.kind === 'file') {
        const { size } = await lstat(entry.absolute);
        prints.set(entry.path, `file:${size}:${await sha256(entry.absolute)}`);
      } else if (entry.kind === 'symlink') {
        prints.set(entry.path, `link:${await readlink(entry.absolute)}`);
      } else {
        prints.set(entry.path, entry.kind === 'directory' ? 'dir' : 'other');
      }
    } catch {
      // Removed between listing and reading: absent from this fingerprint, which is what it is now.
    }
  }
  return prints;
}

/** Paths created, changed or removed between two fingerprints, sorted. */
export function diffFingerprints(before: Fingerprint, after: Fingerprint): string[] {
  const changed = new Set<string>();
  for (const [file, print] of after) if (before.get(file) !== print) changed.add(file);
  for (const file of before.keys()) if (!after.has(file)) changed.add(file);
  return [...changed].sort();
}

/** An audit run between two fingerprints: its outcome or what it threw, and what changed in the workspace meanwhile. */
export interface FingerprintedAudit {
  outcome: AuditOutcome | undefined;
  /** What the auditor threw, when it did (`undefined` otherwise). */
  thrown: unknown;
  after: Fingerprint;
  /** Paths created, changed or removed during the audit: non-empty is an integrity violation. */
  changedPaths: string[];
}

/** Runs an audit and fingerprints the workspace after it; a throw is kept, since a change is recorded whatever happened. */
export async function fingerprintedAudit(
  auditor: AuditorLike,
  input: AuditInput,
  before: Fingerprint,
): Promise<FingerprintedAudit> {
  let outcome: AuditOutcome | undefined;
  let thrown: unknown;
  try {
    outcome = await auditor.audit(input);
  } catch (error) {
    thrown = error;
  }
  const after = await fingerprintWorkspace(input.workspace.root);
  return { outcome, thrown, after, changedPaths: diffFingerprints(before, after) };
}

async function sha256(file: string): Promise<string> {
  // node:crypto on first use rather than with the package.
  const hash = process.getBuiltinModule('node:crypto').createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
