/**
 * What the face hands a mode to start or resume one run.
 * @module
 */
import type { RunResult } from '../../contracts/work.js';
import type { RunCheckpointer, RunSnapshot } from '../../durability/types.js';
import type { HarnessEvents, RunEventNumbering } from '../../event-bus.js';
import type { OutputRequest } from '../../schema/schema-adapter.js';
import type { DataMark } from '../../prompts/datamark.js';
import type { ToolRegistry } from '../../tools/registry.js';
import type { Workspace } from '../../workspace/types.js';
import type { ResolvedHarnessOptions } from './options.js';

/** Everything one run starts from, in either mode. @internal */
export interface ModeRunInit {
  options: ResolvedHarnessOptions;
  registry: ToolRegistry;
  bus: HarnessEvents;
  now: () => number;
  runId: string;
  task: string;
  attachments: string[];
  signal: AbortSignal | undefined;
  workspace: Workspace;
  /**
   * Seals and unlocks the run's workspace once its status is known. Called before `run-finish`, so that a listener
   * of that event can start the next run on the same directory. Never throws.
   */
  endWorkspace?: ((status: RunResult['status']) => Promise<void>) | undefined;
  /** Where the run's snapshots go; absent when the run keeps none (`store: false`). */
  checkpointer?: RunCheckpointer | undefined;
  /** The snapshot to go on from (`harness.resume()`), already checked to belong to this run, mode and options. */
  resume?: RunSnapshot | undefined;
  /**
   * The run's event numbering, shared with its checkpointer (which records the last number in each snapshot).
   * @defaultValue numbering from 1
   */
  numbering?: RunEventNumbering | undefined;
  /** The run's boundary of untrusted text (a resumed run's is the snapshot's). @defaultValue a fresh one */
  dataMark?: DataMark | undefined;
  /** What the harness has to tell before the run goes on (e.g. that it keeps no snapshots); put in `run-start`. */
  warnings?: string[] | undefined;
  /** The app's run context (`run({ context })`), handed to every tool call as `ToolContext.context`; never saved. */
  context?: unknown;
  /** The typed result asked for by `run({ output })`: its schema and JSON Schema. */
  output?: OutputRequest | undefined;
}
