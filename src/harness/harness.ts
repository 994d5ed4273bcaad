/**
 * `createHarness` and the `Harness`: validated options, listeners, and one {@link PipelineRun} per `run()`.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { HarnessEvents, type HarnessEvent, type HarnessEventType, type HarnessListener } from '../events.js';
import type { RunResult } from '../pipeline/types.js';
import { parseMemoryOptions } from '../memory/options.js';
import { ToolRegistry } from '../tools/registry.js';
import { normalizeInput, type RunInput } from './input.js';
import { parseHarnessOptions, type HarnessOptions, type ResolvedHarnessOptions } from './options.js';
import { runManagedMode } from './managed-entry.js';
import { PipelineRun } from './pipeline-run.js';
import { startRunStream, type RunStream } from './run-stream.js';
import { RunTracker } from './run-tracker.js';
import { RunWorkspaces, type CloseResult } from './workspace-lifecycle.js';

export type { RunInput } from './input.js';

/**
 * A configured pipeline. Each `run` gets its own workspace, memory, executors and event log; the harness keeps
 * only its options, its listeners, its runs in flight and the temporary workspaces it made, so two harnesses never
 * share anything. A long-lived host calls {@link Harness.close} when done, which removes temporary workspaces.
 */
export class Harness {
  private readonly options: ResolvedHarnessOptions;
  private readonly registry: ToolRegistry;
  private readonly events: HarnessEvents;
  private readonly workspaces: RunWorkspaces;
  private readonly runs = new RunTracker();
  private readonly now: () => number;
  private readonly generateId: () => string;

  constructor(options: HarnessOptions) {
    this.options = parseHarnessOptions(options);
    this.events = new HarnessEvents(
      this.options.onListenerError ? { onListenerError: this.options.onListenerError } : {},
    );
    this.workspaces = new RunWorkspaces(this.options.workspace);
    // Each run builds its own MemoryManager from these; checking them here makes a bad value fail at createHarness, not at run().
    if (this.options.memory !== undefined) parseMemoryOptions(this.options.memory);
    const tools = this.options.tools;
    this.registry =
      tools instanceof ToolRegistry
        ? tools
        : new ToolRegistry(tools, { toolTimeoutMs: this.options.limits.toolTimeoutMs });
    this.now = this.options.now ?? Date.now;
    this.generateId = this.options.generateId ?? (() => `run-${randomUUID()}`);
  }

  /** Calls `listener` for every event of `type` from every run of this harness. Returns a function that removes it. */
  on<T extends HarnessEventType>(type: T, listener: HarnessListener<T>): () => void {
    return this.events.on(type, listener);
  }

  /** Calls `listener` for every event of every type. Returns a function that removes it. */
  onAny(listener: (event: HarnessEvent) => void): () => void {
    return this.events.onAny(listener);
  }

  /**
   * Starts a run like {@link Harness.run} and returns its events as an async iterable: every event of this run only,
   * in order, ending with `run-finish` (its `result` is the run's result; `stream.result` resolves with it too).
   * Leaving the loop early aborts the run. See docs/events.md.
   */
  stream(input: RunInput): RunStream {
    return startRunStream(input, {
      events: this.events,
      run: (runInput) => this.run(runInput),
      generateId: this.generateId,
    });
  }

  /**
   * Runs one request in the configured mode (the pipeline, or managed mode). Resolves with the result also when the run is aborted, times out, exhausts
   * its iteration budget or a stage fails (an attachment that cannot be copied included); rejects on invalid input, when the workspace cannot be
   * created (`invalid-options`), when another run holds it (`workspace-busy`), and after {@link Harness.close} (`harness-closed`).
   *
   * The run holds its workspace from start to end: a second run on the same directory, in this process or another,
   * is refused until the first ends. When the run ends its workspace accepts no more writes (a tool still running
   * gets `workspace-closed`). `result.workspace` is the directory holding the files; a temporary one stays there
   * until {@link Harness.close}.
   */
  run(input: RunInput): Promise<RunResult> {
    try {
      this.runs.assertOpen();
    } catch (error) {
      return Promise.reject(error);
    }
    return this.runs.track(this.startRun(input));
  }

  /**
   * Ends the harness: refuses new runs (`harness-closed`), aborts the runs in flight and waits for them to settle,
   * then removes the temporary workspaces it created: those of succeeded runs, while failed, aborted and timed-out
   * ones are kept for inspection (`workspace: { keep: true }` keeps all, `{ keep: false }` removes all). A directory
   * you named and a Workspace you passed are never removed. Calling it again returns the same result.
   * @returns the workspace directories it removed and those still on disk
   */
  close(): Promise<CloseResult> {
    return this.runs.close(() => this.workspaces.cleanup());
  }

  private async startRun(input: RunInput): Promise<RunResult> {
    const normalized = normalizeInput(input);
    const runId = normalized.runId ?? this.generateId();
    const lease = await this.workspaces.open(runId);
    const stop = this.runs.signalFor(normalized.signal);
    let result: RunResult | undefined;
    try {
      const init = {
        options: this.options,
        registry: this.registry,
        bus: this.events,
        now: this.now,
        runId,
        task: normalized.task,
        attachments: normalized.attachments,
        signal: stop.signal,
        workspace: lease.workspace,
        endWorkspace: lease.end,
      };
      result = await (this.options.mode === 'managed' ? runManagedMode(init) : new PipelineRun(init).execute());
      return result;
    } finally {
      stop.dispose();
      await lease.end(result?.status);
    }
  }
}

/**
 * Creates a harness: the OneDayAgent pipeline wired with default components, any of which can be replaced.
 *
 * @example
 * ```ts
 * const harness = createHarness({ backend, tools: builtinTools() });
 * harness.on('subtask-finish', (e) => console.log(e.record.title, e.record.status));
 * const result = await harness.run('Compare three note-taking apps and write compare.md');
 * console.log(result.status, result.deliverable.files, result.report);
 * ```
 */
export function createHarness(options: HarnessOptions): Harness {
  return new Harness(options);
}
