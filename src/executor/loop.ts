/**
 * One executor loop: the ReAct cycle of model call, tool calls and observations, bounded by iterations, time and
 * an AbortSignal, checkpointed when asked and able to go on from a checkpoint.
 * @module
 */
import { setMaxListeners } from 'node:events';
import type { ToolCall, ToolSpec } from '../backend/types.js';
import { HarnessError, toHarnessError } from '../errors.js';
import type { EventInput } from '../events.js';
import type { MemoryScope } from '../memory/types.js';
import { DataMark } from '../prompts/datamark.js';
import { CONTINUE_AFTER_LENGTH, NUDGE_AFTER_EMPTY, SUBMIT_ANSWER_TOOL } from '../prompts/executor.js';
import { ToolWorkspace } from '../workspace/tool-workspace.js';
import type { ToolContext, ToolInvocation } from '../tools/types.js';
import { raceSignal } from '../util/race-signal.js';
import { checkResumable } from './checkpoint-check.js';
import {
  INTERRUPTED_OBSERVATION,
  answersFromJournal,
  CheckpointSaver,
  copyProgress,
  type LoopProgress,
  ToolJournal,
  unansweredCalls,
} from './loop-journal.js';
import { interruptedCallsOf } from './interrupted-calls.js';
import { loopResult } from './loop-result.js';
import { freshProgress, type LoopSettings } from './loop-start.js';
import { LoopModel } from './loop-model.js';
import { SUBMIT_SPEC } from './submission.js';
import { runToolRound, type ToolRoundHost } from './tool-round.js';
import type { ExecutorResult, ExecutorRunInput } from '../contracts/executor.js';

const MAX_TIMER_MS = 2_147_483_647;

// `failed`: a checkpoint could not be saved, so the tools still running are stopped too.
type Stop = { status: 'aborted' | 'timeout' | 'failed'; error: HarnessError };
type Submitted = { answer: string; files: string[] };

/**
 * One ReAct loop, in a fresh dialogue or going on from a checkpoint; all per-loop state lives here. It never rejects
 * for a model, tool or store failure: every ending becomes an {@link ExecutorResult} that carries the files the
 * loop's tools wrote, whatever way it ended.
 */
export class Loop {
  private readonly controller = new AbortController();
  private stop: Stop | undefined;
  private readonly cleanups: Array<() => void | Promise<void>> = [];
  /** The dialogue and counters, as a checkpoint carries them. */
  private readonly progress: LoopProgress;
  private readonly model: LoopModel;
  private readonly specs: ToolSpec[];
  private readonly round: ToolRoundHost;
  // Both absent when the loop is not checkpointed, so that path builds no checkpoint at all.
  private readonly saver: CheckpointSaver | undefined;
  private readonly journal: ToolJournal | undefined;

  constructor(
    private readonly settings: LoopSettings,
    private readonly input: ExecutorRunInput,
  ) {
    const { runId, purpose, scope, workspace } = input;
    // A resumed loop marks new tool output with the boundary its saved dialogue names.
    const resumed = input.resumeFrom ? checkResumable(input.resumeFrom, input) : undefined;
    const mark = resumed?.mark ?? input.dataMark ?? DataMark.random();
    const backend = settings.backendFor(purpose);
    const emit = (event: EventInput) => this.emit(event);
    const untilStopped = <T>(work: Promise<T>) => this.untilStopped(work);
    const signal = this.controller.signal;
    // Each tool call of a reply listens to it while it runs; a reply with more than ten parallel calls is no leak.
    setMaxListeners(0, signal);
    const memoryScope: MemoryScope = {
      runId,
      purpose,
      scope,
      backend,
      summarizer: settings.backendFor('summarize'),
      sampling: settings.samplingFor('summarize'),
      workspace,
      signal,
      emit,
      dataMark: mark,
    };
    this.progress = resumed ? copyProgress(resumed.checkpoint) : freshProgress(settings, input, mark);
    this.model = new LoopModel({
      settings,
      input,
      backend,
      mark,
      memoryScope,
      signal,
      progress: this.progress,
      emit,
      untilStopped,
    });
    const cleanups = this.cleanups;
    const toolContext: ToolContext = {
      runId,
      context: settings.context,
      purpose,
      scope,
      // The harness keeps its own state (snapshots, saved outputs) under `.harness/`: tools may read it, never write.
      workspace: new ToolWorkspace(workspace),
      signal,
      backendFor: (role) => settings.backendFor(role),
      generate: (role, request) => this.model.generateFor(role, request),
      onScopeEnd: (cleanup) => {
        cleanups.push(cleanup);
      },
      scopeKey: {},
    };
    // Marked with the run's boundary: an MCP server's descriptions and schemas are untrusted text.
    this.specs = [...settings.tools.specs(mark), SUBMIT_SPEC];
    if (input.onCheckpoint) {
      this.saver = new CheckpointSaver(input.onCheckpoint);
      this.journal = new ToolJournal(input.resumeFrom?.toolCalls, settings.tools);
    }
    const { toolTimeoutMs } = settings.limits;
    this.round = {
      input,
      tools: settings.tools,
      toolContext,
      invokeOptions: {
        alsoAvailable: [SUBMIT_ANSWER_TOOL],
        ...(toolTimeoutMs === undefined ? {} : { timeoutMs: toolTimeoutMs }),
      },
      memory: settings.memory,
      memoryScope,
      mark,
      emit,
      untilStopped,
      ...this.journalHooks(),
    };
  }

  /**
   * A round's journal hooks when the loop is checkpointed: a save before its calls run and after each returns. A call
   * of a tool that is not read-only runs only once the save journaling it as started is stored, so a side effect never
   * runs unrecorded (a resume reports it as interrupted instead of repeating it); every other save goes on behind the
   * loop, as what it records is safe to redo (a read-only call runs again; a finished call whose result was not
   * stored yet is reported as interrupted).
   */
  private journalHooks(): Pick<ToolRoundHost, 'journal'> {
    const { journal } = this;
    if (!journal) return {};
    return {
      journal: {
        starting: async (calls) => {
          journal.start(calls, this.settings.tools);
          await this.checkpoint(journal.hasSideEffects(calls));
        },
        finished: async (invocation) => {
          journal.finish(invocation);
          await this.checkpoint();
        },
      },
    };
  }

  async run(): Promise<ExecutorResult> {
    const { signal } = this.input;
    const timeoutMs = Math.min(this.input.timeoutMs ?? this.settings.limits.timeoutMs, MAX_TIMER_MS);
    const onAbort = () =>
      this.halt(
        'aborted',
        new HarnessError('aborted', `The ${this.input.scope} loop was aborted by the caller.`, {
          cause: signal?.reason,
        }),
      );
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(
      () =>
        this.halt(
          'timeout',
          new HarnessError('timeout', `The ${this.input.scope} loop ran out of time after ${timeoutMs} ms.`),
        ),
      timeoutMs,
    );
    try {
      const result = await this.loop();
      // Saves still behind the loop land before it ends: none may come after the run has moved on.
      await this.untilStopped(this.saver?.idle() ?? Promise.resolve());
      return result;
    } catch (error) {
      return this.finish(error);
    } finally {
      if (this.stop) this.saver?.close();
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      await this.runCleanups();
    }
  }

  private halt(status: Stop['status'], error: HarnessError): void {
    if (this.stop) return;
    this.stop = { status, error };
    this.controller.abort(error);
  }

  private async loop(): Promise<ExecutorResult> {
    const maxIterations = this.input.maxIterations ?? this.settings.limits.maxIterations;
    const progress = this.progress;
    const { resumeFrom } = this.input;
    // A checkpoint saved while a reply's tools ran: that round is finished before the next model call.
    const unanswered = resumeFrom ? unansweredCalls(progress.dialogue) : [];
    if (resumeFrom && unanswered.length > 0) {
      const answers = answersFromJournal(unanswered, resumeFrom.toolCalls, this.settings.tools);
      // Recorded before the round: the round's checkpoint carries them, so a later resume still knows.
      const interrupted = interruptedCallsOf(unanswered, answers, this.input.scope);
      // A resume that stopped again before this round's answers were saved meets the same calls once more.
      const known = new Set((progress.interruptedCalls ?? []).map((call) => JSON.stringify(call)));
      const fresh = interrupted.filter((call) => !known.has(JSON.stringify(call)));
      if (fresh.length) progress.interruptedCalls = [...(progress.interruptedCalls ?? []), ...fresh];
      const submitted = await this.toolRound(unanswered, answers);
      if (submitted) return this.submittedResult(submitted);
    }

    for (;;) {
      this.throwIfStopped();
      if (progress.iterations >= maxIterations) {
        throw new HarnessError(
          'budget-exhausted',
          `The ${this.input.scope} loop used its ${maxIterations} iteration(s) without submitting an answer.`,
        );
      }
      progress.iterations += 1;
      const { dialogue, result } = await this.model.call(progress.dialogue, this.specs);
      const { content, toolCalls } = result.message;
      progress.dialogue = dialogue;
      dialogue.push(
        toolCalls.length > 0
          ? { role: 'assistant', content, toolCalls: [...toolCalls] }
          : { role: 'assistant', content },
      );
      if (content.trim() !== '') progress.lastText = progress.cutOff + content;

      if (toolCalls.length === 0) {
        if (result.finishReason === 'length') {
          progress.cutOff += content;
          dialogue.push({ role: 'user', content: CONTINUE_AFTER_LENGTH });
          await this.checkpoint();
          continue;
        }
        if (content.trim() === '' && progress.cutOff === '') {
          this.countInvalid(
            '',
            (count) =>
              `The model sent ${count} empty replies in a row in ${this.input.scope}; stopping this loop instead of ` +
              'spending its budget.',
          );
          dialogue.push({ role: 'user', content: NUDGE_AFTER_EMPTY });
          await this.checkpoint();
          continue;
        }
        return loopResult(this.progress, 'completed', progress.cutOff + content, progress.toolFiles);
      }
      progress.cutOff = '';

      // This reply's checkpoint is saved by the round, with its calls journaled as started.
      const submitted = await this.toolRound(toolCalls, new Map());
      if (submitted) return this.submittedResult(submitted);
    }
  }

  /**
   * Runs the calls of one reply (`answers`: those a resumed loop answers from its journal), puts the observations in
   * the dialogue, and saves the checkpoint that holds them, unless the reply submitted the answer.
   */
  private async toolRound(
    calls: readonly ToolCall[],
    answers: ReadonlyMap<string, ToolInvocation>,
  ): Promise<Submitted | undefined> {
    const progress = this.progress;
    const { results, observations, submitted } = await runToolRound(this.round, calls, answers);
    for (const result of results) {
      if (result.isError) continue;
      for (const file of result.files) if (!progress.toolFiles.includes(file)) progress.toolFiles.push(file);
    }
    progress.dialogue.push(...observations);
    this.journal?.clear();
    this.throwIfStopped();
    results.forEach((result, index) => {
      // A call a crash interrupted was not the model's mistake: it neither counts as invalid nor breaks a streak.
      if (answers.get(result.callId)?.text === INTERRUPTED_OBSERVATION) return;
      if (!result.isError) {
        progress.invalid = { key: null, count: 0 };
        return;
      }
      this.countInvalid(
        `${result.toolName}\u0000${calls[index]?.arguments ?? ''}`,
        (count) =>
          `The model repeated the same invalid call to "${result.toolName}" ${count} times in a row in ` +
          `${this.input.scope} (last error: ${firstLine(result.text)}); stopping this loop instead of spending its budget.`,
      );
    });
    if (!submitted) await this.checkpoint();
    return submitted;
  }

  /** Counts one more invalid reply or call; throws `malformed-reply` once the same one came too often in a row. */
  private countInvalid(key: string, message: (count: number) => string): void {
    const { invalid } = this.progress;
    const count = invalid.key === key ? invalid.count + 1 : 1;
    this.progress.invalid = { key, count };
    if (count >= this.settings.limits.maxRepeatedInvalidCalls)
      throw new HarnessError('malformed-reply', message(count));
  }

  /**
   * Saves the loop's state when it is checkpointed; waits until the store has it when `mustBeStored` or the loop's
   * durability is `sync`, else the save goes on behind the loop (a crash then redoes the work since the last stored
   * one, which is safe to redo). A failed
   * save stops the loop (and the tools still running) with status `failed` and the save's error: the run must not go
   * on unrecorded. A loop stopped (aborted, timed out) while a save is in flight ends without waiting for it, and
   * nothing runs after the save once it is stopped.
   */
  private async checkpoint(mustBeStored = false): Promise<void> {
    if (!this.saver || !this.journal) return;
    const stored = mustBeStored || this.input.durability === 'sync';
    const { purpose, scope } = this.input;
    const checkpoint = { purpose, scope, ...copyProgress(this.progress), toolCalls: this.journal.snapshot() };
    const saving = this.saver.save(checkpoint, !stored).catch((error: unknown) => {
      const failure = toHarnessError(error, 'store-failed');
      this.halt('failed', failure);
      throw failure;
    });
    if (stored) await this.untilStopped(saving);
    else saving.catch(() => undefined);
    this.throwIfStopped();
  }

  private throwIfStopped(): void {
    if (this.stop) throw this.stop.error;
  }

  /** Settles as soon as the loop is stopped, even when the awaited work ignores the signal. */
  private untilStopped<T>(work: Promise<T>): Promise<T> {
    if (this.stop) {
      work.catch(() => undefined);
      return Promise.reject(this.stop.error);
    }
    const signal = this.controller.signal;
    return raceSignal(work, signal, () => this.stop?.error ?? toHarnessError(signal.reason));
  }

  private finish(error: unknown): ExecutorResult {
    const { lastText, toolFiles } = this.progress;
    if (this.stop) return loopResult(this.progress, this.stop.status, lastText, toolFiles, this.stop.error);
    return loopResult(this.progress, 'failed', lastText, toolFiles, toHarnessError(error));
  }

  /** A submission names the files that matter; what the loop's tools wrote stays part of the result too. */
  private submittedResult(submitted: Submitted): ExecutorResult {
    return loopResult(this.progress, 'completed', submitted.answer, [...this.progress.toolFiles, ...submitted.files]);
  }

  private emit(event: EventInput): void {
    const emit = this.settings.emit;
    if (!emit) return;
    try {
      emit(event);
    } catch {
      // An event consumer must never break a loop.
    }
  }

  private async runCleanups(): Promise<void> {
    // Last registered, first cleaned: later resources may depend on earlier ones.
    for (const cleanup of this.cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch {
        // A failing cleanup must not change the loop's result.
      }
    }
  }
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
