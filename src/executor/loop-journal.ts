/**
 * The durable side of an executor loop: the journal of the tool calls of the reply being worked on, the serialised
 * saves of its checkpoints, and how a resumed loop answers the calls its checkpoint left without an observation.
 * @module
 */
import type { Message, ToolCall } from '../backend/types.js';
import type { LoopCheckpoint, ToolCallJournal } from '../durability/types.js';
import { toHarnessError } from '../errors.js';
import { SUBMIT_ANSWER_TOOL } from '../prompts/executor.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { ToolInvocation } from '../tools/types.js';
import { LatestWriter } from '../util/latest-writer.js';
import { type BackgroundSaves, backgroundSaves, type SlotRequest } from './background-saves.js';

/** The part of a checkpoint a loop changes as it goes: its dialogue and counters. */
export type LoopProgress = Omit<LoopCheckpoint, 'purpose' | 'scope' | 'toolCalls'>;

/**
 * A copy of a loop's dialogue and counters that later changes of the original do not reach (messages and tool
 * results are never changed once made, so the arrays are copied, not their elements).
 */
export function copyProgress(progress: LoopProgress): LoopProgress {
  return {
    iterations: progress.iterations,
    dialogue: [...progress.dialogue],
    usage: { ...progress.usage },
    peakRequestTokens: progress.peakRequestTokens,
    lastText: progress.lastText,
    cutOff: progress.cutOff,
    toolFiles: [...progress.toolFiles],
    invalid: { ...progress.invalid },
    ...(progress.interruptedCalls?.length ? { interruptedCalls: [...progress.interruptedCalls] } : {}),
  };
}

/** The observation of a started call of a non-read-only tool whose outcome a crash or restart left unknown. */
export const INTERRUPTED_OBSERVATION =
  'interrupted: the harness stopped while this call ran (crash or restart); its outcome is unknown — check the ' +
  'workspace before repeating it.';

/**
 * Hands checkpoints to `onCheckpoint` one at a time, in the order they were made; checkpoints made while one is being
 * saved collapse into the newest, saved next. A checkpoint nobody waits for may be handed over a moment later (see
 * {@link CheckpointSaver.save}). After one rejection every later save rejects with the same error without calling it
 * again: a store that failed once must not record a later state over a gap.
 */
export class CheckpointSaver {
  private readonly writer: LatestWriter<LoopCheckpoint>;
  /**
   * The newest checkpoint saved `later`, not handed over yet, the promise its save returned, and what it waits for:
   * the end of the turn it was made in (`timer`), then a slot of {@link backgroundSaves} (`slot`).
   */
  private deferred:
    | {
        checkpoint: LoopCheckpoint;
        settle: Settle;
        done: Promise<void>;
        timer: NodeJS.Immediate | undefined;
        slot: SlotRequest | undefined;
      }
    | undefined;

  constructor(
    onCheckpoint: (checkpoint: LoopCheckpoint) => Promise<void>,
    private readonly slots: BackgroundSaves = backgroundSaves,
  ) {
    this.writer = new LatestWriter(async (checkpoint) => {
      try {
        await onCheckpoint(checkpoint);
      } catch (error) {
        throw toHarnessError(error, 'store-failed');
      }
    });
  }

  /** Saves nothing more (a stopped loop's state must not be recorded after it stopped); a save in progress ends. */
  close(): void {
    const deferred = this.takeDeferred();
    deferred?.settle.resolve();
    this.writer.close();
  }

  /** Settles (never rejects) once every checkpoint handed over so far is saved or refused. */
  idle(): Promise<void> {
    this.flush();
    return this.writer.idle();
  }

  /**
   * Resolves once `checkpoint` (or a newer one) is saved; rejects with the save's error (`store-failed` by default).
   * With `later` (a save the loop does not wait for), it is handed over once the loop's current turn of the event
   * loop is done and one of the process's {@link backgroundSaves} slots is free, unless a newer checkpoint comes first
   * and takes its place: a loop whose next step comes at once (its model answered from a cache), or whose store is
   * busy with other runs' saves, then writes one entry where it would write several, and a step that must wait for
   * its save (a side effect's start) never waits behind a save it does not need.
   */
  save(checkpoint: LoopCheckpoint, later = false): Promise<void> {
    if (later) {
      if (this.deferred) {
        this.deferred.checkpoint = checkpoint;
        return this.deferred.done;
      }
      let settle: Settle = { resolve: () => undefined, reject: () => undefined };
      const done = new Promise<void>((resolve, reject) => {
        settle = { resolve, reject };
      });
      const deferred: NonNullable<CheckpointSaver['deferred']> = {
        checkpoint,
        settle,
        done,
        timer: undefined,
        slot: undefined,
      };
      deferred.timer = setImmediate(() => {
        deferred.timer = undefined;
        deferred.slot = this.slots.request((release) => {
          if (this.deferred !== deferred) return release();
          // The slot is the write's now: given back once it settles.
          deferred.slot = undefined;
          this.handOver(this.takeDeferred(), release);
        });
      });
      this.deferred = deferred;
      return done;
    }
    const covered = this.takeDeferred();
    const saving = this.writer.push(checkpoint);
    if (covered) saving.then(covered.settle.resolve, covered.settle.reject);
    return saving;
  }

  /** Hands the deferred checkpoint over now, if there is one, without waiting for a slot. */
  private flush(): void {
    this.handOver(this.takeDeferred());
  }

  /** Hands `deferred` over to the writer; `release` gives its slot back once the write settles. */
  private handOver(deferred: CheckpointSaver['deferred'], release?: () => void): void {
    if (!deferred) {
      release?.();
      return;
    }
    const saving = this.writer.push(deferred.checkpoint);
    saving.then(deferred.settle.resolve, deferred.settle.reject);
    if (release) saving.then(release, release);
  }

  private takeDeferred(): CheckpointSaver['deferred'] {
    const deferred = this.deferred;
    this.deferred = undefined;
    if (deferred?.timer) clearImmediate(deferred.timer);
    // A slot waited for (or granted) and not used goes to the next loop waiting.
    deferred?.slot?.cancel();
    return deferred;
  }
}

type Settle = { resolve: () => void; reject: (error: unknown) => void };

/** The tool calls of the reply being worked on: `started` before a call runs, `finished` with its result after. */
export class ToolJournal {
  private entries: ToolCallJournal[];

  /** `entries` of a checkpoint go on with each call's `readOnly` flag as `tools` have it, never as saved. */
  constructor(entries: readonly ToolCallJournal[] = [], tools?: ToolRegistry) {
    this.entries = entries.map((entry) => ({
      ...entry,
      ...(tools ? { readOnly: isSafeToRepeat(entry.toolName, tools) } : {}),
    }));
  }

  /** Journals each call not journaled yet as started, with its tool's `readOnly` flag. */
  start(calls: readonly ToolCall[], tools: ToolRegistry): void {
    for (const call of calls) {
      if (this.entries.some((entry) => entry.callId === call.id)) continue;
      this.entries.push({
        callId: call.id,
        toolName: call.name,
        arguments: call.arguments,
        readOnly: isSafeToRepeat(call.name, tools),
        state: 'started',
      });
    }
  }

  /** Whether any of `calls` is journaled as a call of a tool that is not read-only (a side effect to make durable). */
  hasSideEffects(calls: readonly ToolCall[]): boolean {
    return calls.some((call) => this.entries.some((entry) => entry.callId === call.id && !entry.readOnly));
  }

  /** Records a call's result as returned by the tool. */
  finish(invocation: ToolInvocation): void {
    const index = this.entries.findIndex((entry) => entry.callId === invocation.callId);
    const entry = this.entries[index];
    if (!entry) return;
    this.entries[index] = {
      ...entry,
      state: 'finished',
      result: {
        text: invocation.text,
        isError: invocation.isError,
        files: [...invocation.files],
        ...(invocation.images.length > 0 ? { images: [...invocation.images] } : {}),
        durationMs: invocation.durationMs,
      },
    };
  }

  /** Empties the journal once the observations of the reply are in the dialogue. */
  clear(): void {
    this.entries = [];
  }

  /** A copy the loop never changes afterwards (results and their arrays are never mutated in place). */
  snapshot(): ToolCallJournal[] {
    return [...this.entries];
  }
}

/**
 * A call runs nothing when its tool is not registered (the registry answers with an error), so repeating it is as
 * safe as repeating a read-only tool.
 */
function isSafeToRepeat(toolName: string, tools: ToolRegistry): boolean {
  return tools.get(toolName)?.readOnly ?? true;
}

/** The tool calls of the dialogue's last assistant reply that have no observation after it. */
export function unansweredCalls(dialogue: readonly Message[]): ToolCall[] {
  for (let index = dialogue.length - 1; index >= 0; index -= 1) {
    const message = dialogue[index];
    if (message?.role !== 'assistant') continue;
    const answered = new Set(
      dialogue.slice(index + 1).flatMap((later) => (later.role === 'tool' ? [later.toolCallId] : [])),
    );
    return (message.toolCalls ?? []).filter((call) => !answered.has(call.id));
  }
  return [];
}

/**
 * The journaled calls of a checkpoint a resume does not take from the journal as they are: started, unfinished calls
 * of read-only tools are run again, those of other tools are answered as interrupted.
 */
export function journalRedo(checkpoint: Pick<LoopCheckpoint, 'toolCalls'>): {
  rerun: ToolCallJournal[];
  interrupted: ToolCallJournal[];
} {
  const unfinished = checkpoint.toolCalls.filter((entry) => !isFinished(entry));
  return {
    rerun: unfinished.filter((entry) => entry.readOnly),
    interrupted: unfinished.filter((entry) => !entry.readOnly),
  };
}

/**
 * What a resumed loop answers for each unanswered call without running it: the saved result of a finished call, or
 * the interrupted observation for a started call of a tool that is not read-only. Calls missing here are run: those
 * never started, and started calls of read-only tools. Whether a tool is read-only is the registry's say, not the
 * journal's: a checkpoint comes from a store the run does not control.
 */
export function answersFromJournal(
  calls: readonly ToolCall[],
  journal: readonly ToolCallJournal[],
  tools: ToolRegistry,
): Map<string, ToolInvocation> {
  const answers = new Map<string, ToolInvocation>();
  for (const call of calls) {
    const entry = journal.find((journaled) => journaled.callId === call.id);
    if (!entry || call.name === SUBMIT_ANSWER_TOOL) continue;
    const base = { callId: call.id, toolName: call.name, observation: tools.get(call.name)?.observation ?? 'text' };
    if (isFinished(entry)) {
      const { text, isError, files, images = [], durationMs = 0 } = entry.result;
      answers.set(call.id, { ...base, text, isError, files: [...files], images: [...images], durationMs });
    } else if (!isSafeToRepeat(call.name, tools)) {
      answers.set(call.id, {
        ...base,
        text: INTERRUPTED_OBSERVATION,
        isError: true,
        files: [],
        images: [],
        durationMs: 0,
      });
    }
  }
  return answers;
}

function isFinished(entry: ToolCallJournal): entry is ToolCallJournal & Required<Pick<ToolCallJournal, 'result'>> {
  return entry.state === 'finished' && entry.result !== undefined;
}
