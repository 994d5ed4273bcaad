/**
 * Whether a loaded snapshot may be applied to this harness: same format, library version, run, mode and options.
 * @module
 */
import { HarnessError } from '../errors.js';
import { DataMark } from '../prompts/datamark.js';
import { fingerprintDifferences } from './fingerprint.js';
import type { OptionsFingerprint, RunSnapshot } from './types.js';
import { LIBRARY_VERSION, SNAPSHOT_FORMAT } from './version.js';

/** What the resuming harness is. @internal */
export interface ResumeTarget {
  runId: string;
  mode: RunSnapshot['mode'];
  fingerprint: OptionsFingerprint;
}

/**
 * Throws `resume-incompatible` naming every header field that differs (with the snapshot's and the harness's value)
 * when the snapshot was written by another format, library version, run or mode, or under other options. Nothing
 * is applied before this check passes.
 * @internal
 */
export function assertResumable(snapshot: unknown, target: ResumeTarget): asserts snapshot is RunSnapshot {
  const differences = headerDifferences(snapshot, target);
  if (!differences.length) return;
  throw new HarnessError(
    'resume-incompatible',
    `Cannot resume run "${target.runId}": its snapshot does not match this harness (${differences.join('; ')}). ` +
      'Nothing was applied. Resume it with the library version and options it was started with, or start a new run.',
  );
}

function headerDifferences(snapshot: unknown, target: ResumeTarget): string[] {
  if (typeof snapshot !== 'object' || snapshot === null) return ['the snapshot is not an object'];
  const s = snapshot as Partial<RunSnapshot>;
  const differences: string[] = [];
  const compare = (name: string, saved: unknown, now: unknown) => {
    if (saved !== now) differences.push(`${name}: snapshot ${JSON.stringify(saved)}, now ${JSON.stringify(now)}`);
  };
  compare('format', s.format, SNAPSHOT_FORMAT);
  // Fields of another format may mean anything: name the format only.
  if (differences.length) return differences;
  compare('library', s.library, LIBRARY_VERSION);
  compare('runId', s.runId, target.runId);
  compare('mode', s.mode, target.mode);
  if (s.status !== 'running' && s.status !== 'finished') compare('status', s.status, 'running or finished');
  if (!DataMark.isId(s.dataMark)) compare('dataMark', s.dataMark, '16 lowercase hex digits');
  if (typeof s.workspace !== 'string' || !s.workspace) compare('workspace', s.workspace, 'a directory path');
  const saved = s.fingerprint;
  if (typeof saved?.hash !== 'string' || typeof saved.fields !== 'object' || saved.fields === null) {
    differences.push('fingerprint: missing from the snapshot');
  } else if (saved.hash !== target.fingerprint.hash) {
    const fields = fingerprintDifferences(saved, target.fingerprint);
    differences.push(
      ...(fields.length ? fields : [`fingerprint: snapshot ${saved.hash}, now ${target.fingerprint.hash}`]),
    );
  }
  return differences;
}
