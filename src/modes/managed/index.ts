/**
 * Managed mode (LongHorizon-Harness): a Manager keeps an audited task state outside every model context, an
 * Executor (the built-in loop or an external agent) carries out one contract per round in a fresh context, and a
 * read-only, fingerprinted Auditor decides what the state records as done.
 * @module
 */
export {
  runManaged,
  type ManagedRunInit,
  type ManagedRunResult,
  type ReportFold,
  type RunControlLike,
  type RunStop,
} from './loop.js';
export {
  MANAGED_DEFAULTS,
  ManagedOptionsSchema,
  parseManagedOptions,
  type ManagedOptions,
  type ResolvedManagedOptions,
} from '../shared/managed-options.js';
export { Manager, fallbackDecision, type ManagerOptions } from './manager.js';
export { Auditor, type AuditorOptions } from './auditor.js';
export { AUDITOR_PROMPT, MANAGER_PROMPT, type AuditCommands } from './prompts.js';
export { functionAgent, harnessAgent, isHarnessAgent, type HarnessAgent } from './adapters.js';
export type { AgentAdapter, EpisodeInput, EpisodeResult, EpisodeStatus } from '../../contracts/agent-adapter.js';
export { AGENT_ENV_ALLOWLIST, commandAgent, type CommandAgentOptions } from './command-agent.js';
export { diffFingerprints, fingerprintWorkspace, type Fingerprint } from './integrity.js';
export { listFilesTool } from './list-files.js';
export { applyAudit, applyDrafts, emptyTaskState, openRecords, TASK_STATE_FILE, type AuditUpdate } from './state.js';
export type { ManagedReport, ManagedRunReport, ManagedTally, RoleTokens } from './report.js';
export {
  readManagedState,
  type ManagedEnding,
  type ManagedPosition,
  type ManagedSnapshotState,
} from './snapshot.js';
export type {
  AnsweredQuestion,
  AuditFinding,
  AuditInput,
  AuditIntegrity,
  AuditOutcome,
  AuditorLike,
  AuditReport,
  AuditStatus,
  AuditVerdict,
  Contract,
  Evidence,
  ExecutionClaim,
  FinalVerification,
  ManagerDecision,
  ManagerInput,
  ManagerLike,
  ManagerNext,
  ManagerOutcome,
  OnAsk,
  RecordDraft,
  TaskRecord,
  TaskRecordStatus,
  TaskState,
} from '../../contracts/managed.js';
