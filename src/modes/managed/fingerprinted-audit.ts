/**
 * An audit with the workspace and the harness's state watched around it, and what the watching found as the
 * harness's own findings: changes during the audit (a violation), files the findings cite that differ when the
 * verdict arrives, links that lead out of the workspace or into `.harness/`, and changes to `.harness/` by anyone but
 * the harness (a violation).
 * @module
 */
import type { AuditFinding, AuditInput, AuditorLike, AuditOutcome, AuditVerdict } from '../../contracts/managed.js';
import {
  changedNow,
  citedPaths,
  diffFingerprints,
  escapingLinks,
  fingerprintHarnessState,
  fingerprintWorkspace,
  type Fingerprint,
} from './integrity.js';

/** An audit run between two fingerprints: its outcome or what it threw, and what the watching found. */
export interface FingerprintedAudit {
  outcome: AuditOutcome | undefined;
  /** What the auditor threw, when it did (`undefined` otherwise). */
  thrown: unknown;
  after: Fingerprint;
  /** Workspace paths created, changed or removed during the audit: non-empty is an integrity violation. */
  changedPaths: string[];
  /** `.harness/` paths someone other than the harness changed during the audit: non-empty is a violation. */
  harnessChanged: string[];
  /** Files a finding cites that differed from the fingerprint before the audit when the verdict arrived. */
  citedChanged: string[];
}

/**
 * Runs an audit and fingerprints the workspace after it; a throw is kept, since a change is recorded whatever
 * happened. The files the verdict's findings cite are checked again the moment the verdict arrives, before the
 * whole workspace is walked, so a change that is undone while the walk runs is still seen.
 */
export async function fingerprintedAudit(
  auditor: AuditorLike,
  input: AuditInput,
  before: Fingerprint,
): Promise<FingerprintedAudit> {
  const root = input.workspace.root;
  const harnessBefore = await fingerprintHarnessState(root);
  let outcome: AuditOutcome | undefined;
  let thrown: unknown;
  try {
    outcome = await auditor.audit(input);
  } catch (error) {
    thrown = error;
  }
  const findings = outcome?.verdict.findings ?? [];
  const cited = citedPaths(
    findings.flatMap((f) => [f.check, f.observed]),
    before,
  );
  const citedChanged = await changedNow(root, cited, before);
  const after = await fingerprintWorkspace(root);
  const harnessChanged = diffFingerprints(harnessBefore, await fingerprintHarnessState(root));
  return { outcome, thrown, after, changedPaths: diffFingerprints(before, after), harnessChanged, citedChanged };
}

/** What the harness's own checks of a round found, beside the auditor's findings. */
export interface RoundChecks {
  /** `.harness/` paths changed by someone else during the execution. */
  harnessChangedByExecutor: readonly string[];
  audit: Pick<FingerprintedAudit, 'harnessChanged' | 'citedChanged' | 'after'>;
  /** The workspace as the execution left it (links are judged there and after the audit). */
  before: Fingerprint;
}

/**
 * The verdict with the harness's checks applied: each problem becomes a failing finding naming no record (so the
 * manager sees it and no record completes), and the integrity is raised to `suspect` (cited files that changed,
 * links out of the workspace or into `.harness/`) or `violation` (`.harness/` changed by someone else).
 */
export function withRoundChecks(verdict: AuditVerdict, checks: RoundChecks): AuditVerdict {
  const harnessChanged = [...new Set([...checks.harnessChangedByExecutor, ...checks.audit.harnessChanged])].sort();
  const links = [...new Set([...escapingLinks(checks.before), ...escapingLinks(checks.audit.after)])].sort();
  const added: AuditFinding[] = [];
  if (harnessChanged.length) {
    added.push({
      check: 'Harness check: nothing but the harness changed its .harness/ folder during the round.',
      observed: `Changed by someone else: ${harnessChanged.join(', ')}`,
      verdict: 'fail',
    });
  }
  if (checks.audit.citedChanged.length) {
    added.push({
      check: 'Harness check: the files the findings cite were as the execution left them when the verdict arrived.',
      observed: `Different when the verdict arrived: ${checks.audit.citedChanged.join(', ')}`,
      verdict: 'fail',
    });
  }
  if (links.length) {
    added.push({
      check: 'Harness check: no symbolic link leads out of the workspace or into .harness/.',
      observed: `Links the audit cannot vouch for: ${links.join(', ')}`,
      verdict: 'fail',
    });
  }
  if (added.length === 0) return verdict;
  const integrity = verdict.integrity === 'violation' || harnessChanged.length ? 'violation' : 'suspect';
  return { ...verdict, integrity, findings: [...verdict.findings, ...added] };
}
