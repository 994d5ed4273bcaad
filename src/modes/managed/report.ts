/**
 * The `managed` section of a managed run's report: counters folded from the run's events one at a time (plain JSON,
 * so a snapshot carries them instead of an event log), completed from the final state when the run ends.
 * @module
 */
import type { HarnessEvent } from '../../events.js';
import type {
  AuditIntegrity,
  AuditStatus,
  ManagerNext,
  TaskRecordStatus,
  TaskState,
} from '../../contracts/task-state.js';
import type { RunReport } from '../../contracts/work.js';

/** Model calls and tokens of one managed role, and its share of the three roles' tokens. */
export interface RoleTokens {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  /** (input + output) / the manager's, executor's and auditor's together; 0 when none were used. */
  share: number;
}

/** What a managed run did (LongHorizon-Harness's behaviour metrics). */
export interface ManagedReport {
  /** Manager decisions made. */
  rounds: number;
  decisions: Record<ManagerNext, number>;
  /** Decisions the fallback made because the manager's reply stayed malformed. */
  managerFallbacks: number;
  audits: {
    total: number;
    byStatus: Record<AuditStatus, number>;
    byIntegrity: Record<AuditIntegrity, number>;
    /** Audits whose reply stayed malformed (counted as incomplete + suspect). */
    malformed: number;
  };
  /** Audits during which the workspace changed. */
  integrityViolations: number;
  /** Records by final status. */
  records: Record<TaskRecordStatus, number>;
  /**
   * Tokens the harness's own model calls used per role; a call belongs to the role whose scope it ran in
   * (`manage-N`, `execute-N`, `audit-N`), so summaries and tool calls inside a loop count for that loop's role.
   * External agents' tokens are not seen and not counted.
   */
  tokensByRole: { manager: RoleTokens; executor: RoleTokens; auditor: RoleTokens };
  /** Why the run ended `blocked`: the manager's and the blocked records' reasons, or its unanswered question. */
  blocked?: { reasons: string[]; question?: string };
}

/** A managed run's report: the pipeline's metrics plus the `managed` section. */
export type ManagedRunReport = RunReport & { managed: ManagedReport };

/** The counters of the `managed` section that events decide (the shares are computed at the end). @internal */
export type ManagedTally = Omit<ManagedReport, 'records' | 'blocked'>;

const ROLE_OF_SCOPE: Record<string, keyof ManagedReport['tokensByRole']> = {
  manage: 'manager',
  execute: 'executor',
  audit: 'auditor',
};

/** A tally of no events. @internal */
export function newManagedTally(): ManagedTally {
  return {
    rounds: 0,
    decisions: { execute: 0, done: 0, blocked: 0, ask: 0 },
    managerFallbacks: 0,
    audits: {
      total: 0,
      byStatus: { complete: 0, incomplete: 0, blocked: 0 },
      byIntegrity: { clean: 0, suspect: 0, violation: 0 },
      malformed: 0,
    },
    integrityViolations: 0,
    tokensByRole: { manager: role(), executor: role(), auditor: role() },
  };
}

/** Adds one event to `tally`. @internal */
export function tallyManagedEvent(tally: ManagedTally, event: HarnessEvent): void {
  switch (event.type) {
    case 'manager-decision':
      tally.rounds += 1;
      tally.decisions[event.next] += 1;
      if (event.fallback) tally.managerFallbacks += 1;
      break;
    case 'audit-finish':
      tally.audits.total += 1;
      tally.audits.byStatus[event.status] += 1;
      tally.audits.byIntegrity[event.integrity] += 1;
      if (event.fallback) tally.audits.malformed += 1;
      break;
    case 'integrity-violation':
      tally.integrityViolations += 1;
      break;
    case 'llm-response': {
      const name = ROLE_OF_SCOPE[/^(manage|execute|audit)-/.exec(event.scope ?? '')?.[1] ?? ''];
      if (!name) break;
      const tokens = tally.tokensByRole[name];
      tokens.calls += 1;
      tokens.inputTokens += event.usage.inputTokens;
      tokens.outputTokens += event.usage.outputTokens;
      break;
    }
    default:
      break;
  }
}

/** The `managed` section from a run's tally and final state. @internal */
export function managedReportFromTally(
  tally: ManagedTally,
  state: TaskState,
  blocked: ManagedReport['blocked'],
): ManagedReport {
  const report: ManagedReport = {
    ...structuredClone(tally),
    records: { completed: 0, pending: 0, blocked: 0, untrusted: 0 },
    ...(blocked ? { blocked } : {}),
  };
  for (const record of state.records) report.records[record.status] += 1;
  const roles = Object.values(report.tokensByRole);
  const total = roles.reduce((sum, r) => sum + r.inputTokens + r.outputTokens, 0);
  for (const r of roles) r.share = total > 0 ? (r.inputTokens + r.outputTokens) / total : 0;
  return report;
}

function role(): RoleTokens {
  return { calls: 0, inputTokens: 0, outputTokens: 0, share: 0 };
}
