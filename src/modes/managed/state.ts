/**
 * The task state and its two transitions: the manager's drafts (new or revised work, always pending) and an audit
 * (the update rule). Pure functions returning new states; `saveTaskState` writes one to the workspace.
 * @module
 */
import { headTail } from '../../memory/truncate.js';
import type { Evidence, RecordDraft, TaskRecord, TaskState } from '../../contracts/task-state.js';
import type { Workspace } from '../../workspace/types.js';
import type { AuditFinding, AuditVerdict } from '../../contracts/managed.js';

/** Where the task state is saved, relative to the workspace root. */
export const TASK_STATE_FILE = '.harness/task-state.json';

/** The state before the first round. */
export function emptyTaskState(): TaskState {
  return { records: [], round: 0 };
}

/** Records not yet completed by a clean audit. */
export function openRecords(state: TaskState): TaskRecord[] {
  return state.records.filter((record) => record.status !== 'completed');
}

/**
 * Applies the manager's drafts for `round`: an unknown id adds a pending record; a known id with a new description is
 * revised and becomes pending again (its old evidence stays, but it no longer shows the new description done); a
 * draft that repeats a record unchanged changes nothing. The manager cannot set a status.
 */
export function applyDrafts(state: TaskState, drafts: readonly RecordDraft[], round: number): TaskState {
  const next: TaskState = { records: structuredClone(state.records), round };
  for (const draft of drafts) {
    const existing = next.records.find((record) => record.id === draft.id);
    if (!existing) {
      next.records.push({ id: draft.id, description: draft.description, status: 'pending', evidence: [] });
    } else if (existing.description !== draft.description) {
      existing.description = draft.description;
      existing.status = 'pending';
      existing.reason = `Revised by the manager in round ${round}; not audited since.`;
    }
  }
  return next;
}

/** One audit to apply. */
export interface AuditUpdate {
  round: number;
  /** The audit's name in evidence: `audit-<round>`. */
  audit: string;
  verdict: AuditVerdict;
  /** The round's records: the only ones the audit can change. */
  recordIds: readonly string[];
  /** Paths changed during the audit; non-empty is an integrity violation whatever the verdict says. */
  changedPaths: readonly string[];
  /** Characters kept of each finding's check and observation. */
  evidenceChars: number;
}

/**
 * The update rule. For each record of the round, only the findings naming it (`recordId`) are its evidence; findings
 * naming no record of the round change no record (the manager sees them in the audit report). Then: a violation
 * (changed paths, or the auditor's own `violation`) or `suspect` integrity → `untrusted`; `blocked` → `blocked` with
 * the failing findings as reason; a clean complete audit (status `complete`, no failing finding at all, since a
 * failure it could not place may concern any record) with a passing finding that names the record and says what was
 * observed → `completed`; anything else → `pending` with the reason (a record no finding names stays pending, saying
 * so). Records outside the round are not changed.
 */
export function applyAudit(state: TaskState, update: AuditUpdate): TaskState {
  const next: TaskState = structuredClone(state);
  const { round, audit, verdict } = update;
  const clip = (text: string) => headTail(text, update.evidenceChars);
  const violation = update.changedPaths.length > 0;
  const roundIds = new Set(update.recordIds);
  // Failing findings about no record of the round: shown to the manager, evidence for no record, but no audit that
  // reports them is a clean complete one.
  const unplaced = verdict.findings.filter(
    (f) => f.verdict === 'fail' && (f.recordId === undefined || !roundIds.has(f.recordId)),
  );
  const unplacedWhy = describe(unplaced);
  for (const record of next.records) {
    if (!roundIds.has(record.id)) continue;
    const own = verdict.findings.filter((f) => f.recordId === record.id);
    const evidence: Evidence[] = own.map((f) => ({
      round,
      audit,
      check: clip(f.check),
      observed: clip(f.observed),
      verdict: f.verdict,
    }));
    if (violation) {
      evidence.push({
        round,
        audit,
        check: 'The workspace did not change during the audit.',
        observed: clip(`Changed during the audit: ${update.changedPaths.join(', ')}`),
        verdict: 'fail',
      });
    }
    record.evidence.push(...evidence);
    const failing = own.filter((f) => f.verdict === 'fail');
    const why = describe(failing) || (unplacedWhy ? `findings naming no record: ${unplacedWhy}` : '');
    const observedPass = own.some((f) => f.verdict === 'pass' && f.observed.trim() !== '');
    if (violation || verdict.integrity !== 'clean') {
      record.status = 'untrusted';
      record.reason = clip(
        violation
          ? `The workspace changed during the audit of round ${round} (${update.changedPaths.join(', ')}); its findings cannot be trusted.`
          : verdict.integrity === 'violation'
            ? `The audit of round ${round} reported an integrity violation${why ? `: ${why}` : '.'}`
            : `The audit of round ${round} found its evidence suspect${why ? `: ${why}` : '.'}`,
      );
    } else if (verdict.status === 'blocked') {
      record.status = 'blocked';
      record.reason = clip(why || `The audit of round ${round} found the contract blocked.`);
    } else if (verdict.status === 'complete' && observedPass && failing.length === 0 && unplaced.length === 0) {
      record.status = 'completed';
      delete record.reason;
    } else {
      record.status = 'pending';
      record.reason = clip(why || pendingReason(round, verdict.status, own));
    }
  }
  return next;
}

/** Failing findings as one line of `check: observed`. */
function describe(findings: readonly AuditFinding[]): string {
  return findings.map((f) => `${f.check}: ${f.observed}`).join('; ');
}

/** Why a record with no failing finding stays pending. */
function pendingReason(round: number, status: AuditVerdict['status'], own: readonly AuditFinding[]): string {
  if (own.length === 0) return `The audit of round ${round} gave no finding naming this record.`;
  if (!own.some((f) => f.verdict === 'pass')) return `The audit of round ${round} gave no passing finding for it.`;
  if (status !== 'complete') return `The audit of round ${round} found the contract incomplete.`;
  return `The audit of round ${round} passed this record without saying what it observed.`;
}

/** Saves the state to {@link TASK_STATE_FILE} (an atomic write through the workspace). */
export async function saveTaskState(workspace: Workspace, state: TaskState, scope: string): Promise<void> {
  await workspace.writeFile(TASK_STATE_FILE, `${JSON.stringify(state, null, 2)}\n`, { tool: 'managed', scope });
}
