/**
 * The task state and its two transitions: the manager's drafts (new or revised work, always pending) and an audit
 * (the update rule). Pure functions returning new states; `saveTaskState` writes one to the workspace.
 * @module
 */
import { headTail } from '../../memory/truncate.js';
import type { Evidence, RecordDraft, TaskRecord, TaskState } from '../../contracts/task-state.js';
import type { Workspace } from '../../workspace/types.js';
import type { AuditVerdict } from '../../contracts/managed.js';

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
 * The update rule. For each record of the round, the findings naming it (and those naming no record) become its
 * evidence; then: a violation (changed paths, or the auditor's own `violation`) or `suspect` integrity → `untrusted`;
 * `blocked` → `blocked` with the failing findings as reason; `complete` with a passing finding and no failing one →
 * `completed`; anything else → `pending` with the reason. Findings about records outside the round change nothing.
 */
export function applyAudit(state: TaskState, update: AuditUpdate): TaskState {
  const next: TaskState = structuredClone(state);
  const { round, audit, verdict } = update;
  const clip = (text: string) => headTail(text, update.evidenceChars);
  const violation = update.changedPaths.length > 0;
  for (const record of next.records) {
    if (!update.recordIds.includes(record.id)) continue;
    const own = verdict.findings.filter((f) => f.recordId === undefined || f.recordId === record.id);
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
    const why = failing.map((f) => `${f.check}: ${f.observed}`).join('; ');
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
    } else if (verdict.status === 'complete' && own.some((f) => f.verdict === 'pass') && failing.length === 0) {
      record.status = 'completed';
      delete record.reason;
    } else {
      record.status = 'pending';
      record.reason = clip(
        why ||
          (verdict.status === 'complete'
            ? `The audit of round ${round} gave no passing evidence for this record.`
            : `The audit of round ${round} found the contract incomplete.`),
      );
    }
  }
  return next;
}

/** Saves the state to {@link TASK_STATE_FILE} (an atomic write through the workspace). */
export async function saveTaskState(workspace: Workspace, state: TaskState, scope: string): Promise<void> {
  await workspace.writeFile(TASK_STATE_FILE, `${JSON.stringify(state, null, 2)}\n`, { tool: 'managed', scope });
}
