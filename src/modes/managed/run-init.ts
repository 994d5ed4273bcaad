/**
 * What one managed run starts from: the host's wiring (events, backends, memory, tools, limits), its stop control,
 * its report fold and, for a durable run, its checkpointer and the snapshot to go on from.
 * @module
 */
import type { LlmBackend, Purpose } from '../../backend/types.js';
import type { RunCheckpointer, RunSnapshot } from '../../durability/types.js';
import type { HarnessErrorCode } from '../../errors.js';
import type { EmitEvent, HarnessEvent } from '../../events.js';
import type { ModelCallContext, Sampling } from '../../llm/call-model.js';
import type { ExecutionMemory } from '../../memory/types.js';
import type { TaskState } from '../../contracts/task-state.js';
import type { RunReport, RunResult, Verdict } from '../../contracts/work.js';
import type { VerifierLike } from '../../contracts/roles.js';
import type { DataMark } from '../../prompts/datamark.js';
import type { ToolRegistry } from '../../tools/registry.js';
import type { OutputRequest } from '../../schema/schema-adapter.js';
import type { Workspace } from '../../workspace/types.js';
import type { ManagedOptions } from '../shared/managed-options.js';
import type { ManagedRunReport } from './report.js';
import type { RoleInstructions } from '../../prompts/instructions.js';

/** How a run stopped early, as a {@link RunControlLike} reports it. */
export interface RunStop {
  reason: 'aborted' | 'timeout' | 'budget' | 'error';
  error: { code: string; message: string };
  stage: string;
}

/**
 * The run's stop state (the harness's `RunControl` fits): one abort controller for everything in flight, the time
 * limit, and how a thrown error becomes the run's stop.
 */
export interface RunControlLike {
  /** Aborted when the run stops. */
  readonly controller: AbortController;
  readonly stopped: 'aborted' | 'timeout' | 'budget' | undefined;
  /** Watches the caller's signal and the time limit; returns the function that stops watching. */
  watch(signal: AbortSignal | undefined): () => void;
  stop(reason: 'aborted' | 'timeout' | 'budget'): void;
  /** Milliseconds the run has left. */
  timeLeft(): number;
  /** Throws the stop when the run has stopped. */
  check(stage: string): void;
  /** Throws at once for an error no retry can cure (wrong credentials, unknown model). */
  failFast(error: { code: HarnessErrorCode; message: string } | undefined, stage: string): void;
  /** Runs a stage call; a throw becomes the run's stop. */
  guard<T>(stage: string, fn: () => Promise<T>): Promise<T>;
  /** The stop a thrown error means. */
  asStop(error: unknown, stage: string): RunStop;
}

/**
 * The pipeline's part of a managed run's report, folded from the run's events (the harness folds a `ReportTally` with
 * `tallyEvent` and reports it with `reportFromTally`). `tally` is plain JSON: the run saves it in its snapshots as
 * `state.tallies.base`, and a resumed run's host passes the one saved.
 */
export interface ReportFold<Tally> {
  /** The counters so far. */
  readonly tally: Tally;
  /** Adds one event to `tally`. */
  add(event: HarnessEvent): void;
  /** The report of the run (no subtasks; the final verifications' verdicts) from `tally`; `managed` is added to it. */
  report(wallTimeMs: number, verdicts: readonly Verdict[]): RunReport;
}

/** Everything one managed run starts from. */
export interface ManagedRunInit<Tally = unknown> {
  runId: string;
  /** The original request. */
  task: string;
  /** Already copied into the workspace; workspace-relative. */
  attachments: string[];
  workspace: Workspace;
  signal: AbortSignal | undefined;
  now: () => number;
  /** Stamps and sends an event. */
  emit: EmitEvent;
  /** The backend of a role: `manage`, `audit`, `execute`, `summarize`, `vision`. */
  backendFor: (role: Purpose) => LlmBackend;
  samplingFor: (role: Purpose) => Sampling | undefined;
  /** The configured output reserve (`limits.maxOutputTokens`). */
  maxOutputTokens: number;
  memory: ExecutionMemory;
  /**
   * The host's tools: all of them for the executor and the read-only ones for the auditor, unless
   * `managed.executorTools` / `managed.auditorTools` say otherwise.
   */
  registry: ToolRegistry;
  /**
   * The typed result asked for by `run({ output })`, and how it is asked for (a call of the `synthesize` role); asked
   * once the loop ended `succeeded` or `unverified`.
   */
  output?: { request: OutputRequest; call: ModelCallContext } | undefined;
  /** The app's run context (`run({ context })`), handed to every tool call as `ToolContext.context`; never saved. */
  context?: unknown;
  /**
   * `maxIterations` bounds each executor loop and each audit (with `managed.executorIterations` /
   * `auditorIterations`), not the run; `timeoutMs` is the run's deadline.
   */
  /** `maxRunIterations`: the optional cap over all the run's executor and audit loops (undefined: none). */
  limits: { maxIterations: number; timeoutMs: number; toolTimeoutMs: number; maxRunIterations?: number | undefined };
  /** The `managed` options (parsed again here, so raw or parsed both work). */
  options: ManagedOptions;
  /** The application's instructions for the manager, the auditor and the built-in executor (`createHarness`'s). */
  instructions?: RoleInstructions | undefined;
  /**
   * The final verification's verifier (the harness passes its `verify` role's: `components.verifier`, `roles.verify`,
   * `prompts.verify`, prices and cost limit), made with the run's emit: its calls reach the report's fold like every
   * other role's. Absent: a `Verifier` on `backendFor('verify')`.
   */
  verifier?: ((emit: EmitEvent) => VerifierLike) | undefined;
  /**
   * The run's stop state, built from `limits` (the harness passes `new RunControl(limits, elapsedBeforeMs)`: a resumed
   * run's time used before counts against the limit).
   */
  control: RunControlLike;
  /** The pipeline's report, folded from the run's events; the `managed` section is added. */
  baseReport: ReportFold<Tally>;
  /**
   * The run's boundary of untrusted text in every prompt.
   * @defaultValue the resumed snapshot's, else a fresh `DataMark.random()`
   */
  dataMark?: DataMark | undefined;
  /** Where the run's snapshots go (mode `managed`); absent: the run saves none. */
  checkpointer?: RunCheckpointer | undefined;
  /** The snapshot to go on from, already checked to be this run's (mode `managed`, the same options). */
  resume?: RunSnapshot | undefined;
}

/** A managed run's result: `taskState` is always set and the report has its `managed` section. */
export type ManagedRunResult = RunResult & { report: ManagedRunReport; taskState: TaskState };
