/**
 * Shapes of managed mode: what the manager and the auditor receive and return, the `…Like` interfaces a host's
 * replacement implements, and the executor's claim. The task-state shapes themselves live in `src/contracts/task-state.ts`
 * (results and events carry them) and are re-exported here.
 * @module
 */
import type {
  AuditFinding,
  AuditIntegrity,
  AuditStatus,
  Contract,
  ManagerNext,
  RecordDraft,
  TaskState,
} from './task-state.js';
import type { HarnessErrorCode } from '../errors.js';
import type { DataMark } from '../prompts/datamark.js';
import type { Workspace } from '../workspace/types.js';
import type { EpisodeStatus } from './agent-adapter.js';
import type { Verdict } from './work.js';

export type {
  AuditFinding,
  AuditIntegrity,
  AuditStatus,
  Contract,
  Evidence,
  ManagerNext,
  RecordDraft,
  TaskRecord,
  TaskRecordStatus,
  TaskState,
} from './task-state.js';

/** What an auditor concludes about one round. */
export interface AuditVerdict {
  status: AuditStatus;
  integrity: AuditIntegrity;
  findings: AuditFinding[];
}

/** How the executor's episode ended and what it says it did. Nothing in it is verified; no record changes because of it. */
export interface ExecutionClaim {
  /** `harness` for the built-in loop, else the adapter's name. */
  agent: string;
  /** How the episode ended, as the harness saw it (not as the executor tells it). */
  status: EpisodeStatus;
  /** The process's exit code, for command agents. */
  exitCode?: number;
  /** The executor's own account (its answer or its output), bounded by the memory layer. */
  summary: string;
  /** Files the built-in executor's tools wrote or it named in `submit_answer`. */
  files: string[];
  /** Why the episode failed, when the harness knows. */
  error?: string;
}

/** One round's audit as the manager sees it: the verdict, the contract it judged and how the execution ended. */
export interface AuditReport extends AuditVerdict {
  round: number;
  contract: Contract;
  /** How the execution ended (a harness fact; the executor's claim itself is never shown to the manager). */
  execution: { agent: string; status: EpisodeStatus; exitCode?: number };
  /** Paths that changed during the audit; non-empty means `integrity: 'violation'`. */
  changedPaths: string[];
  fallback?: 'malformed-reply';
  reason?: string;
}

/** A question the manager asked and the host's answer. */
export interface AnsweredQuestion {
  question: string;
  answer: string;
}

/**
 * A final verification: after a `done` the completion gate accepted (in `round`), the Verifier's verdict on the
 * deliverable against the original request. A failed one goes back to the manager as evidence.
 */
export interface FinalVerification {
  round: number;
  verdict: Verdict;
}

/** What {@link ManagerLike.decide} receives: never an executor trace or claim, and no environment access. */
export interface ManagerInput {
  runId: string;
  round: number;
  /** The original request, verbatim. */
  request: string;
  /** Workspace-relative paths of the attachments. */
  attachments: readonly string[];
  state: TaskState;
  /** Every audit so far, oldest first. */
  audits: readonly AuditReport[];
  /** The questions the manager asked and the host answered, oldest first. */
  answers: readonly AnsweredQuestion[];
  /** What the harness tells the manager about its last decision (e.g. `done` refused while records are open). */
  feedback: readonly string[];
  /** The last final verification, when one failed: its defects are what the request still lacks. */
  verification?: FinalVerification | undefined;
  /**
   * Whether the built-in auditor can run commands (read-only, in the sandbox); `false`: criteria about command output
   * cannot be verified in this run. Absent when unknown (an external or replaced auditor).
   */
  auditorRunsCommands?: boolean | undefined;
  /** Whether a `done` the completion gate accepts is followed by the final verification. */
  finalVerification?: boolean | undefined;
  signal?: AbortSignal;
  /** The run's boundary of untrusted text in prompts; absent: a fresh one for this call. */
  dataMark?: DataMark;
}

/** What the manager decided. `contract.recordIds` is resolved: never empty for `execute`. */
export interface ManagerDecision {
  /** New or revised records (never a status: only audits set statuses). */
  records: RecordDraft[];
  next: ManagerNext;
  contract?: Contract;
  question?: string;
  reason?: string;
  /** With `done`: the final answer to the request, as the user should read it (the deliverable's text). */
  answer?: string;
}

/** A decision, and why it is not the model's own when the documented fallback made it. */
export interface ManagerOutcome {
  decision: ManagerDecision;
  fallback?: 'malformed-reply';
  reason?: string;
}

/** Anything that can manage; pass one as `managed.components.manager`. */
export interface ManagerLike {
  decide(input: ManagerInput): Promise<ManagerOutcome>;
}

/** What {@link AuditorLike.audit} receives. */
export interface AuditInput {
  runId: string;
  round: number;
  /** The original request, verbatim. */
  request: string;
  attachments: readonly string[];
  /** The audited state before this round's audit. */
  state: TaskState;
  contract: Contract;
  /** The executor's unverified claim. */
  claim: ExecutionClaim;
  /** Paths the harness saw change while the executor ran (from workspace fingerprints, not from the executor). */
  changedByExecutor: readonly string[];
  workspace: Workspace;
  signal?: AbortSignal;
  /** ReAct iterations the built-in auditor may use, its re-ask included. */
  maxIterations?: number;
  /** Milliseconds the audit may take. */
  timeoutMs?: number;
  /** The run's boundary of untrusted text in prompts; absent: a fresh one for this audit. */
  dataMark?: DataMark;
}

/** An audit's outcome: the verdict, and how much of the run's iteration budget it used. */
export interface AuditOutcome {
  verdict: AuditVerdict;
  /** Set when the reply stayed malformed after one re-ask; the verdict is then `incomplete` + `suspect`. */
  fallback?: 'malformed-reply';
  reason?: string;
  /** ReAct iterations used (0 for external agents). */
  iterations: number;
  /** Why the audit's loop or agent failed, when it did (a run ends at once on errors no retry can cure). */
  error?: { code: HarnessErrorCode; message: string };
}

/** Anything that can audit; pass one as `managed.components.auditor`. The run fingerprints the workspace around it. */
export interface AuditorLike {
  audit(input: AuditInput): Promise<AuditOutcome>;
}

/** Answers a manager's question (`managed.onAsk`); the answer is shown to the manager as the user's. */
export type OnAsk = (question: string, state: TaskState) => string | Promise<string>;
