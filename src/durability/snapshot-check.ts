/**
 * Whether a loaded snapshot may be applied to this harness: same format, library version, run, mode and options, and
 * executor loops (`loops`) in the shape this version saves.
 * @module
 */
import { HarnessError } from '../errors.js';
import { DataMark } from '../prompts/datamark.js';
import { fingerprintDifferences } from './fingerprint.js';
import type { LoopCheckpoint, OptionsFingerprint, RunSnapshot } from './types.js';
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
  if (s.loops !== undefined && !(Array.isArray(s.loops) && s.loops.every(isLoopLike))) {
    compare('loops', typeof s.loops, 'a list of loop checkpoints');
  }
  // The shape before parallel subtasks held one loop; its runs belong to the version that wrote it.
  if ('loop' in s) differences.push('loop: a one-loop snapshot of an earlier version (now `loops`)');
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

function isLoopLike(loop: unknown): boolean {
  const l = loop as Partial<LoopCheckpoint> | null;
  return typeof l === 'object' && l !== null && typeof l.scope === 'string' && typeof l.purpose === 'string';
}
