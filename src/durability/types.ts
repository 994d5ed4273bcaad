/**
 * Durable runs: the store a run's snapshots go to, and the shapes a snapshot is made of. A run saves a snapshot after
 * every model response, every tool call's start and end, and every stage change (between whole snapshots, as lines of
 * the run's journal when its store keeps one); `harness.resume()` continues from the last one. See docs/durability.md.
 * @module
 */
import type { ContentPart, Message, Usage } from '../backend/types.js';
import type { InterruptedCall } from '../contracts/work.js';

/**
 * Where a run's snapshots are kept: the file store in the run's workspace by default, Redis with
 * `horizon-harness/bullmq`, or your own. Implementations must make `save` atomic (after a crash, `load` returns the
 * previous or the new snapshot, never a mix) and may reject; a rejected `save` ends the run with `store-failed`.
 */
export interface RunStore {
  /** Replaces the run's snapshot. */
  save(runId: string, snapshot: RunSnapshot): Promise<void>;
  /** The run's last saved snapshot, or `undefined` when there is none. */
  load(runId: string): Promise<RunSnapshot | undefined>;
  /** The ids of the runs that have a snapshot. */
  list(): Promise<string[]>;
  /** Removes the run's snapshot (no error when there is none). */
  delete(runId: string): Promise<void>;
  /**
   * Optional: the secret the harness derives each run's snapshot key from, kept by the store where the runs' agents
   * cannot read it (the Redis store keeps one in Redis, `FileRunStore({ dir })` one in `dir`); `undefined` when the
   * store keeps none. It must be at least 32 random bytes, the same in every process that resumes the store's runs.
   * The harness's `snapshotKey` option goes first; without either, the per-user key file is used (see
   * docs/durability.md, "Tamper-evident snapshots").
   */
  snapshotSecret?(): Promise<Uint8Array | undefined>;
  /**
   * Optional, with {@link RunStore.loadJournal}: appends `lines` (JSON texts without a newline, sealed by the
   * harness) to the run's journal, each followed by `\n`, and resolves once they are durable (one `fdatasync` in the
   * file store, one `APPEND` in Redis). Between two snapshots the harness records each save as one such line instead
   * of writing the whole snapshot again: declaring a side-effecting tool call costs one append. `save` must discard
   * the journal (with the new snapshot, or right after it: lines of an earlier snapshot are ignored), and `delete`
   * remove it. After a crash in the middle of an append, a last line cut short may remain: the harness ignores it. A
   * store without these methods gets every save as a whole snapshot, as before.
   */
  appendJournal?(runId: string, lines: readonly string[]): Promise<void>;
  /**
   * Optional, with {@link RunStore.appendJournal}: the run's journal as appended since its last `save`, or
   * `undefined` when there is none. A store should refuse (`snapshot-corrupt`) a journal larger than the snapshots it
   * reads before reading it; the harness checks the text it gets as untrusted input (size, nesting, seal, shape).
   */
  loadJournal?(runId: string): Promise<string | undefined>;
}

/**
 * Everything a run needs to continue: plain JSON. `state` is the mode's own part (the pipeline's stages or managed
 * mode's task state); the header says whether it may be applied at all.
 */
export interface RunSnapshot {
  /** Version of this shape; a snapshot of another format is refused (`resume-incompatible`). */
  format: 2;
  /** The `horizon-harness` version that wrote it. */
  library: string;
  runId: string;
  mode: 'pipeline' | 'managed';
  /** What the options that change a run's course were (see {@link OptionsFingerprint}). */
  fingerprint: OptionsFingerprint;
  /** Harness clock when saved. */
  savedAt: number;
  /** Sequence number of the last event emitted before this save. */
  seq: number;
  /** `running` until the run ends; a finished snapshot carries the result, and resuming it returns that result. */
  status: 'running' | 'finished';
  input: { task: string; attachments: string[] };
  /** Absolute path of the run's workspace. */
  workspace: string;
  /** The run's data-mark id, so the resumed prompts keep the boundary the saved dialogue was marked with. */
  dataMark: string;
  /** Budgets used so far. */
  used: { iterations: number; elapsedMs: number };
  /** The mode's own state: plan, records, verdicts, deliverable, repairs, report tally, … */
  state: unknown;
  /**
   * The executor loops in progress when the snapshot was saved, each at its latest state (several when subtasks run
   * in parallel); absent between loops. A resumed run takes each up from here.
   */
  loops?: LoopCheckpoint[];
  /** The run's result, once `status` is `finished`. */
  result?: unknown;
  /**
   * The seal, always the last field: HMAC-SHA256 (hex) of the snapshot's JSON bytes without it, under a key of this
   * run that is kept outside the workspace. A resume refuses a snapshot whose seal does not match
   * (`snapshot-tampered`). Set by the harness when it saves; a store keeps it as it is.
   */
  mac?: string;
}

/**
 * The options that decide what a run does, each as a short string (numbers, booleans, names of tools and
 * components, model ids), plus their hash. Resuming under options with another hash is refused, naming the fields
 * that differ.
 */
export interface OptionsFingerprint {
  hash: string;
  fields: Record<string, string>;
}

/** One tool call of the reply being worked on, as journaled around its execution. */
export interface ToolCallJournal {
  callId: string;
  toolName: string;
  arguments: string;
  /** The tool's `readOnly` flag when the call started: a started, unfinished read-only call is re-run on resume. */
  readOnly: boolean;
  /** `started` is saved before the tool runs, `finished` with its result once it returned. */
  state: 'started' | 'finished';
  /** The tool's result as returned, once finished. */
  result?: {
    text: string;
    isError: boolean;
    files: string[];
    /** Images the tool returned for the model, when it returned any. */
    images?: Array<Extract<ContentPart, { type: 'image' }>>;
    /** How long the call took, for its `tool-result` event. */
    durationMs?: number;
  };
}

/**
 * The state of one executor loop, saved after every model response and every tool call's start and end, so that a
 * resumed loop goes on with at most one model call and one tool call re-done.
 */
export interface LoopCheckpoint {
  purpose: 'execute' | 'synthesize' | 'repair';
  scope: string;
  /** Model calls made so far. */
  iterations: number;
  /** The dialogue as the memory layer holds it (already bounded). */
  dialogue: Message[];
  usage: Usage;
  peakRequestTokens: number;
  /** The last non-empty text the model wrote. */
  lastText: string;
  /** Text of replies cut by the output limit, waiting for their continuation. */
  cutOff: string;
  /** Files the loop's tools wrote so far. */
  toolFiles: string[];
  /** The repeated-invalid-call detector: the last invalid call's key and how often it came in a row. */
  invalid: { key: string | null; count: number };
  /** The tool calls of the dialogue's last assistant reply that have no observation in `dialogue` yet. */
  toolCalls: ToolCallJournal[];
  /** Calls an earlier resume of this loop answered as interrupted; absent when there was none. */
  interruptedCalls?: InterruptedCall[];
}

/** Options of `harness.resume()`. */
export interface ResumeOptions {
  /**
   * The run's workspace directory. Needed to find the snapshot of the default file store, which lives in the
   * workspace (`.harness/run.json`); with another store, the snapshot's own workspace is used when this is absent.
   */
  workspace?: string;
  signal?: AbortSignal;
  /** The store to load from and save to. @defaultValue the harness's `store` option */
  store?: RunStore;
}

/** What the resumed run re-does, as told by `run-resume` and counted in the report. */
export interface ResumeRedo {
  /** The model calls that were in flight when the run stopped (at most one per loop in progress). */
  modelCalls: number;
  /** Started, unfinished calls of read-only tools, re-run. */
  rerunToolCalls: string[];
  /** Started, unfinished calls of other tools, reported to the model as interrupted (not re-run). */
  interruptedToolCalls: string[];
}

/**
 * A run's link to its store, as a mode uses it; the harness builds one per run and fills in the snapshot's header
 * (version, fingerprint, event sequence number, input, workspace, data mark). Saves never overlap: those made while
 * one is being written collapse into the newest, and each save's promise resolves once it, or a newer one, is
 * stored (the run's `durability` decides which of them it waits for).
 * @internal
 */
export interface RunCheckpointer {
  /**
   * Saves the mode's state, the budgets used and the latest state of each executor loop in progress (if any).
   * Rejects with a `HarnessError` `store-failed` when the store fails; the last good snapshot stays as it was.
   */
  save(progress: { state: unknown; used: RunSnapshot['used']; loops?: LoopCheckpoint[] }): Promise<void>;
  /** Saves the ended run's result (`status: 'finished'`); a failure is reported as a `run-warning`, never thrown. */
  finish(result: unknown): Promise<void>;
  /**
   * Settles (never rejects) once every save made so far is stored, refused or given up on: a run that ends without
   * `finish` (aborted, or its store failed) waits for it, so that nothing writes to the store after the run returned
   * (short of a store that completes a write it was given up on).
   */
  idle(): Promise<void>;
  /**
   * Ties the saves to the run's stop: once `signal` aborts, the save in flight is given up on (it rejects with
   * `store-failed`, and so does every later one) instead of holding the stopped run; with none in flight the finished
   * snapshot is saved as usual. The modes pass their run control's signal (abort, `harness.close()`, time limit).
   */
  stopOn?(signal: AbortSignal): void;
}
