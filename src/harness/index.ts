/** createHarness, the Harness and the shapes of a run. @module */
export {
  createHarness,
  Harness,
  type HarnessResumeOptions,
  type RunInput,
  type RunRequest,
  type TypedRunResult,
} from './harness.js';
export type { CloseResult, WorkspaceOption, WorkspaceSettings } from './workspace-lifecycle.js';
export type { RunStream } from './run-stream.js';
export { DEFAULT_PROMPTS } from './default-prompts.js';
export {
  HarnessOptionsSchema,
  type HarnessOptions,
  type RoleName,
  type SamplingOption,
} from '../modes/shared/options.js';
export { buildReport } from '../modes/shared/report.js';
export { partialDeliverable, renderCheckpoints, renderDeliverable, toCheckpoint } from '../handoff/checkpoints.js';
export type {
  Checkpoint,
  Defect,
  Deliverable,
  PlannedSubtask,
  PurposeUsage,
  RunReport,
  RunResult,
  SubtaskRecord,
  Verdict,
  WriteConflict,
} from '../contracts/work.js';
