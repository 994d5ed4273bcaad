/** createHarness, the Harness and the shapes of a run. @module */
export { createHarness, Harness, type RunInput } from './harness.js';
export type { CloseResult, WorkspaceOption, WorkspaceSettings } from './workspace-lifecycle.js';
export type { RunStream } from './run-stream.js';
export { HarnessOptionsSchema, type HarnessOptions, type RoleName, type SamplingOption } from './options.js';
export { buildReport } from './report.js';
export { partialDeliverable, renderCheckpoints, renderDeliverable, toCheckpoint } from '../pipeline/checkpoints.js';
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
} from '../pipeline/types.js';
