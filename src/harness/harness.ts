/**
 * `createHarness` and the `Harness`: validated options, listeners, and one {@link PipelineRun} per `run()`.
 * @module
 */
import path from 'node:path';
import { assertRunId } from '../durability/run-id.js';
import { SnapshotSeal } from '../durability/snapshot-seal.js';
import { HarnessError } from '../errors.js';
import { continuationTask, type ContinuedRun } from '../handoff/continuation.js';
import { DataMark } from '../prompts/datamark.js';
import type { OptionsFingerprint, RunSnapshot, RunStore } from '../durability/types.js';
import { HarnessEvents } from '../event-bus.js';
import { RunEventLogs } from '../event-log/run-event-log.js';
import type { HarnessEvent, HarnessEventType, HarnessListener } from '../events.js';
import type { RunResult } from '../contracts/work.js';
import { parseMemoryOptions } from '../memory/options.js';
import { ToolRegistry } from '../tools/registry.js';
import { SecretRedactor } from '../util/secrets.js';
import { loadSnapshot, resumeSource, runDurability, storeOfRun, type SnapshotCheck } from './durable-run.js';
import {
  normalizeInput,
  normalizeResumeOptions,
  type HarnessResumeOptions,
  type NormalizedResumeOptions,
  type RunInput,
  type RunRequest,
} from './input.js';
import type { OutputRequest } from '../schema/schema-adapter.js';
import type { StandardSchemaV1 } from '../schema/standard-schema.js';
import { optionsFingerprint } from './options-fingerprint.js';
import { parseHarnessOptions, type HarnessOptions, type ResolvedHarnessOptions } from '../modes/shared/options.js';
import { runManagedMode } from '../modes/managed/run-managed-mode.js';
import { PipelineRun } from '../modes/pipeline/pipeline-run.js';
import { startRunStream, type RunStream } from './run-stream.js';
import { RunTracker } from './run-tracker.js';
import { RunWorkspaces, type CloseResult, type WorkspaceLease } from './workspace-lifecycle.js';

export type { HarnessResumeOptions, RunInput, RunRequest } from './input.js';

/** The result of a run given `output: S`: `output` typed from the schema. */
export type TypedRunResult<S extends StandardSchemaV1 | undefined> = S extends StandardSchemaV1
  ? RunResult<StandardSchemaV1.InferOutput<S>>
  : RunResult;

/**
 * A configured pipeline. Each `run` gets its own workspace, memory, executors and event log; the harness keeps
 * only its options, its listeners, its runs in flight and the temporary workspaces it made, so two harnesses never
 * share anything. A long-lived host calls {@link Harness.close} when done, which removes temporary workspaces.
 * `Context` is the type of the app's run context (`run({ task, context })`, `ToolContext.context`).
 */
export class Harness<Context = unknown> {
  private readonly options: ResolvedHarnessOptions;
  private readonly registry: ToolRegistry;
  private readonly events: HarnessEvents;
  private readonly workspaces: RunWorkspaces;
  private readonly runs = new RunTracker();
  /** Each run's event log (`.harness/events.jsonl`, or the host's sink). */
  private readonly eventLogs: RunEventLogs;
  private readonly now: () => number;
  private readonly generateId: () => string;
  /** What a snapshot must have been made under to be resumed here. */
  private readonly fingerprint: OptionsFingerprint;

  constructor(options: HarnessOptions) {
    this.options = parseHarnessOptions(options);
    const redactor = new SecretRedactor({
      owners: () => [this.options.backend, ...Object.values(this.options.roles), ...this.registry.list()],
    });
    this.events = new HarnessEvents({
      ...(this.options.onListenerError ? { onListenerError: this.options.onListenerError } : {}),
      redact: (event) => redactor.data(event),
    });
    this.workspaces = new RunWorkspaces(this.options.workspace);
    this.eventLogs = new RunEventLogs(this.options.eventLog, this.events, (error, event) =>
      this.events.reportListenerError(error, event),
    );
    // Each run builds its own MemoryManager from these; checking them here makes a bad value fail at createHarness, not at run().
    if (this.options.memory !== undefined) parseMemoryOptions(this.options.memory);
    const tools = this.options.tools;
    this.registry =
      tools instanceof ToolRegistry
        ? tools
        : new ToolRegistry(tools, { toolTimeoutMs: this.options.limits.toolTimeoutMs });
    this.now = this.options.now ?? Date.now;
    this.generateId = this.options.generateId ?? (() => `run-${crypto.randomUUID()}`);
    this.fingerprint = optionsFingerprint(this.options, this.registry);
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
   * Makes the `llm-request` and `llm-response` events of this harness's runs carry the call's messages (`content`)
   * until the returned function is called. Off by default: prompts are large and sensitive. Tracing with content
   * capture (`horizon-harness/otel`) uses it.
   */
  captureContent(): () => void {
    return this.events.captureContent();
  }

  /**
   * Starts a run like {@link Harness.run} and returns its events as an async iterable: every event of this run only,
   * in order, ending with `run-finish` (its `result` is the run's result; `stream.result` resolves with it too).
   * Leaving the loop early aborts the run. See docs/events.md.
   */
  stream(input: RunInput<Context>): RunStream {
    return startRunStream(input, {
      events: this.events,
      run: (runInput) => this.run(runInput as RunInput<Context>),
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
   *
   * With `context`, every tool call gets it as `ToolContext.context`; with `output`, the result carries the answer as
   * a value of that schema (`result.output`, typed from it); with `continueFrom`, the run starts from a finished
   * run's deliverable, verdict and files in its workspace (see docs/apps.md). `continueFrom` rejects with
   * `invalid-input` for a run that has not finished or worked in another workspace, `run-not-found` for an unknown one.
   */
  run<S extends StandardSchemaV1 | undefined = undefined>(
    input: string | RunRequest<Context, S>,
  ): Promise<TypedRunResult<S>> {
    try {
      this.runs.assertOpen();
    } catch (error) {
      return Promise.reject(error);
    }
    return this.runs.track(this.startRun(input)) as Promise<TypedRunResult<S>>;
  }

  /**
   * Goes on with a run from its last snapshot (see docs/durability.md) and resolves with its result, of the same
   * shape as `run()`'s: events from `run-resume` on carry `resumed: true`, and the report counts the resume. A
   * finished run's saved result is returned without running anything. The snapshot is looked for in `options.store`,
   * else the harness's `store`, else the workspace's file store (`options.workspace`, else the harness's workspace
   * directory). A snapshot is untrusted input: nothing of it is applied before it passed every check. Rejects with
   * `invalid-input` for a run id that breaks the run-id rule, `run-not-found` when there is no snapshot,
   * `snapshot-tampered` when its seal does not match (it was changed, or not written by the harness with this run's
   * key), `resume-incompatible` when it was made by another library version, mode or options, `snapshot-corrupt` when
   * it is cut short, malformed, too large or of an unknown shape, `store-failed` when the store cannot be read,
   * `invalid-input` when the run's workspace directory is gone, `workspace-busy` when a live run holds it, and
   * `harness-closed` after {@link Harness.close}; `invalid-input` too for options that are not
   * `{ workspace?, signal?, store? }` (a workspace that is not a non-empty string, say).
   */
  resume<S extends StandardSchemaV1 | undefined = undefined>(
    runId: string,
    options?: HarnessResumeOptions<Context, S>,
  ): Promise<TypedRunResult<S>> {
    let checked: NormalizedResumeOptions;
    try {
      this.runs.assertOpen();
      checked = normalizeResumeOptions(options);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.runs.track(this.resumeRun(runId, checked)) as Promise<TypedRunResult<S>>;
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

  private async startRun(input: RunInput<unknown, StandardSchemaV1 | undefined>): Promise<RunResult> {
    const normalized = normalizeInput(input);
    const runId = normalized.runId ?? this.generateId();
    assertRunId(runId, normalized.runId === undefined ? 'the harness by its generateId option' : 'harness.run()');
    const continuation = normalized.continueFrom ? await this.continuedRun(normalized.continueFrom) : undefined;
    const lease = continuation
      ? await this.workspaces.reopen(continuation.workspace, runId)
      : await this.workspaces.open(runId);
    let sealed: { store: RunStore; seal: SnapshotSeal } | undefined;
    const warnings: string[] = [];
    try {
      const { store, warning } = await storeOfRun(normalized.store, this.options.store, lease.workspace.root);
      if (warning) warnings.push(warning);
      if (store) {
        const option = this.options.snapshotKey;
        const seal = await SnapshotSeal.forRun({ runId, option, store, workspaceRoot: lease.workspace.root });
        if (seal.warning) warnings.push(seal.warning);
        sealed = { store, seal };
      }
    } catch (error) {
      await lease.end(undefined);
      throw error;
    }
    // Host paths as absolute ones: a resume in another working directory copies the same files.
    const attachments = normalized.attachments.map((file) => path.resolve(file));
    return this.execute(runId, lease, { ...normalized, attachments, store: sealed, warnings, continuation });
  }

  /**
   * The finished run a new one continues: its result as given, or loaded from its snapshot by run id (with its
   * request). Refuses one that has not finished and one of another workspace than this harness's.
   */
  private async continuedRun(from: {
    runId: string;
    result?: RunResult;
  }): Promise<ContinuedRun & { workspace: string }> {
    const named = this.workspaces.namedRoot();
    let previous: ContinuedRun & { workspace: string };
    if (from.result) {
      previous = { ...from.result, workspace: from.result.workspace };
    } else {
      assertRunId(from.runId, 'continueFrom');
      const source = resumeSource(from.runId, undefined, this.options.store, named);
      const seal = await SnapshotSeal.forRun({
        runId: from.runId,
        option: this.options.snapshotKey,
        store: source.store,
      });
      const check: SnapshotCheck = {
        seal,
        target: { runId: from.runId, mode: this.options.mode, fingerprint: this.fingerprint },
        registry: this.registry,
      };
      const loading = this.runs.signalFor(undefined);
      let snapshot: RunSnapshot;
      try {
        snapshot = await loadSnapshot(from.runId, source, check, {
          timeoutMs: this.options.storeTimeoutMs,
          signal: loading.signal,
        });
      } finally {
        loading.dispose();
      }
      if (snapshot.status !== 'finished' || !snapshot.result) throw notFinished(from.runId, 'running');
      previous = { ...(snapshot.result as RunResult), task: snapshot.input.task, workspace: snapshot.workspace };
    }
    if (previous.status === 'aborted') throw notFinished(from.runId, 'aborted');
    if (named !== undefined && path.resolve(named) !== path.resolve(previous.workspace)) {
      throw new HarnessError(
        'invalid-input',
        `continueFrom: run "${from.runId}" worked in "${previous.workspace}", not in this harness's workspace ` +
          `"${path.resolve(named)}". Continue it with a harness on its workspace.`,
      );
    }
    return previous;
  }

  private async resumeRun(runId: string, options: NormalizedResumeOptions): Promise<RunResult> {
    assertRunId(runId, 'harness.resume()');
    const workspace = options.workspace ?? this.workspaces.namedRoot();
    const source = resumeSource(runId, options.store, this.options.store, workspace);
    const seal = await SnapshotSeal.forRun({ runId, option: this.options.snapshotKey, store: source.store });
    const check: SnapshotCheck = {
      seal,
      target: { runId, mode: this.options.mode, fingerprint: this.fingerprint },
      registry: this.registry,
    };
    // The loads end when the caller aborts or the harness closes, and after storeTimeoutMs.
    const loading = this.runs.signalFor(options.signal);
    const bound = { timeoutMs: this.options.storeTimeoutMs, signal: loading.signal };
    let lease: WorkspaceLease;
    let snapshot: RunSnapshot;
    try {
      const found = await loadSnapshot(runId, source, check, bound);
      if (found.status === 'finished') return found.result as RunResult;
      lease = await this.workspaces.reopen(path.resolve(workspace ?? found.workspace), runId);
      try {
        // Read again under the lock: the run may have moved on (or finished) while another process held it.
        snapshot = await loadSnapshot(runId, source, check, bound);
      } catch (error) {
        await lease.end(undefined);
        throw error;
      }
    } finally {
      loading.dispose();
    }
    if (snapshot.status === 'finished') {
      await lease.end(undefined);
      return snapshot.result as RunResult;
    }
    const input = {
      task: snapshot.input.task,
      attachments: snapshot.input.attachments,
      signal: options.signal,
      context: options.context,
      output: options.output,
    };
    return this.execute(runId, lease, { ...input, store: { store: source.store, seal }, warnings: [] }, snapshot);
  }

  /** Runs (or goes on with) one run on its leased workspace, in the configured mode. */
  private async execute(
    runId: string,
    lease: WorkspaceLease,
    input: {
      task: string;
      attachments: string[];
      signal: AbortSignal | undefined;
      store: { store: RunStore; seal: SnapshotSeal } | undefined;
      warnings: string[];
      context: unknown;
      output: OutputRequest | undefined;
      /** The finished run a new run continues: its state is put after the task, marked with the run's data mark. */
      continuation?: ContinuedRun | undefined;
    },
    resume?: RunSnapshot,
  ): Promise<RunResult> {
    const stop = this.runs.signalFor(input.signal);
    const log = this.eventLogs.start(runId, {
      append: lease.appendOwn,
      resolve: (file) => lease.workspace.resolve(file, 'read'),
    });
    let result: RunResult | undefined;
    const mark = input.continuation ? DataMark.random() : undefined;
    const task = input.continuation && mark ? continuationTask(input.task, input.continuation, mark) : input.task;
    try {
      const durability = runDurability({
        store: input.store,
        runId,
        mode: this.options.mode,
        fingerprint: this.fingerprint,
        input: { task, attachments: input.attachments },
        workspace: lease.workspace.root,
        bus: this.events,
        now: this.now,
        resume,
        dataMark: mark,
        storeTimeoutMs: this.options.storeTimeoutMs,
        signal: stop.signal,
      });
      const init = {
        options: this.options,
        registry: this.registry,
        bus: this.events,
        now: this.now,
        runId,
        task,
        attachments: input.attachments,
        signal: stop.signal,
        workspace: lease.workspace,
        endWorkspace: lease.end,
        warnings: input.warnings,
        context: input.context,
        output: input.output,
        ...durability,
        resume,
      };
      result = await (this.options.mode === 'managed' ? runManagedMode(init) : new PipelineRun(init).execute());
      return result;
    } finally {
      stop.dispose();
      await lease.end(result?.status);
      // The run resolves once its event log holds everything up to its run-finish.
      await log?.close();
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
export function createHarness<Context = unknown>(options: HarnessOptions): Harness<Context> {
  return new Harness<Context>(options);
}

function notFinished(runId: string, state: 'running' | 'aborted'): HarnessError {
  return new HarnessError(
    'invalid-input',
    `continueFrom: run "${runId}" has not finished (it was ${state === 'aborted' ? 'aborted' : 'stopped while running'}): ` +
      'resume it with harness.resume() first, then continue from its result.',
  );
}
