/**
 * Shapes of the managed mode's task state (LongHorizon-Harness): records, their audited evidence, the contract of a
 * round and what an audit finds. They live here, below every mode, because `RunResult` and the events carry them;
 * `src/modes/managed` builds on them and re-exports them.
 * @module
 */

/**
 * Where a record stands. Only a finding that names the record, says what it observed and passes, in a clean, complete
 * audit, makes a record `completed`; `untrusted` means
 * the audit that last judged it cannot be relied on (the workspace changed while it ran, or it reported itself
 * suspect).
 */
export type TaskRecordStatus = 'completed' | 'pending' | 'blocked' | 'untrusted';

/** One audited fact about a record: what the audit of which round checked, what it observed and its verdict. */
export interface Evidence {
  round: number;
  /** The audit that found it: `audit-<round>`. */
  audit: string;
  /** What was checked, e.g. `report.md has a "Budget" section`. */
  check: string;
  /** What was seen: a file path, an excerpt of a file or of a command's output (bounded). */
  observed: string;
  verdict: 'pass' | 'fail';
}

/** One unit of work in the task state. */
export interface TaskRecord {
  /** Short, stable id chosen by the manager, e.g. `tests-pass`. */
  id: string;
  description: string;
  status: TaskRecordStatus;
  /** Every audited finding about this record, oldest first. */
  evidence: Evidence[];
  /** Why the record is not completed (after an audit): the failing checks, the blocking cause or the integrity problem. */
  reason?: string;
}

/** The task state S, kept outside every model context and saved in the workspace after every change. */
export interface TaskState {
  records: TaskRecord[];
  /** The current round (0 before the first manager decision). */
  round: number;
}

/** A record the manager adds or revises: its id and what it asks for. */
export interface RecordDraft {
  id: string;
  description: string;
}

/** What the manager decides next. */
export type ManagerNext = 'execute' | 'done' | 'blocked' | 'ask';

/** The contract of one round: what the executor must do and what the auditor checks. */
export interface Contract {
  task: string;
  /** Facts about the environment the auditor can check. */
  acceptanceCriteria: string[];
  /** What the executor must not do. */
  boundaries: string[];
  /** The records this round works on; an audit updates only these. */
  recordIds: string[];
}

/** How an audit judged the contract. */
export type AuditStatus = 'complete' | 'incomplete' | 'blocked';

/** Whether an audit's evidence can be trusted. */
export type AuditIntegrity = 'clean' | 'suspect' | 'violation';

/** One check an auditor made. */
export interface AuditFinding {
  /**
   * The record the finding is about. A finding without one (or naming a record outside the round) is evidence for no
   * record: the manager sees it in the audit report, and a failing one keeps the audit from completing any record.
   */
  recordId?: string;
  check: string;
  observed: string;
  verdict: 'pass' | 'fail';
}
