/**
 * The pipeline's execute stage: each planned subtask in a fresh executor loop once the subtasks it depends on have
 * finished, up to `limits.maxParallelSubtasks` at a time, started in plan order; each retried up to
 * `limits.subtaskAttempts` times. With decomposition off the stage is the run's one loop on the request itself, tried
 * once (the paper's DIRECT). Every running subtask's progress is recorded in the run's state, so that a resumed run
 * takes the stage up in the subtasks and attempts it stopped in.
 * @module
 */
import type { ExecutorResult } from '../../contracts/executor.js';
import { saveLongAnswer } from '../../handoff/answers.js';
import { renderCheckpoints, toCheckpoint } from '../../handoff/checkpoints.js';
import type { PlannedSubtask, SubtaskRecord } from '../../contracts/work.js';
import { renderDirectObjective, renderSubtaskObjective } from '../../prompts/subtask.js';
import type { SubtaskProgress } from './pipeline-state.js';
import { FATAL_ERROR_CODES } from '../shared/run-control.js';
import type { StageContext } from './stage-context.js';
import { startableSubtasks, writeConflictsOf } from './subtask-schedule.js';

/** How a subtask's run ended: its record, or the error that ends the run (a store failure). */
type Ended =
  | { index: number; record: SubtaskRecord; lastError: ExecutorResult['error'] }
  | { index: number; error: unknown };

/**
 * Runs the subtasks not yet recorded, those a snapshot stopped in first. A stop (abort, timeout, used-up budget) or
 * a failure that ends the run (one no retry can cure, a store failure) stops every running subtask; the ones never
 * started are reported `skipped`.
 * @internal
 */
export async function executeStage(run: StageContext): Promise<void> {
  const plan = run.s.plan ?? [];
  const running = new Map<number, Promise<Ended>>();
  // Aborted when one subtask ends the run, so that the others running beside it stop with it.
  const halt = new AbortController();
  const signal = AbortSignal.any([run.control.controller.signal, halt.signal]);
  let failure: { error: unknown } | undefined;
  const launch = (progress: SubtaskProgress): void => {
    const ended = runSubtask(run, plan[progress.index] as PlannedSubtask, progress, signal).then(
      (outcome): Ended => ({ index: progress.index, ...outcome }),
      (error: unknown): Ended => ({ index: progress.index, error }),
    );
    running.set(progress.index, ended);
  };
  const fail = (error: unknown): void => {
    failure ??= { error };
    halt.abort();
  };
  // The subtasks a snapshot stopped in go on first.
  for (const progress of run.s.current) launch(progress);
  for (;;) {
    if (!failure && !run.control.stopped) await startReady(run, launch, new Set(running.keys())).catch(fail);
    if (!running.size) break;
    const ended = await Promise.race(running.values());
    running.delete(ended.index);
    if ('error' in ended) fail(ended.error);
    else await finishSubtask(run, ended).catch(fail);
  }
  if (failure) throw failure.error;
  run.control.check('execute');
}

/**
 * Starts the subtasks whose dependencies have all finished, in plan order, while slots are free. Each sees the
 * checkpoints of every subtask finished by now.
 */
async function startReady(
  run: StageContext,
  launch: (progress: SubtaskProgress) => void,
  running: ReadonlySet<number>,
): Promise<void> {
  const plan = run.s.plan ?? [];
  const indexOf = new Map(plan.map((subtask, index) => [subtask.id, index]));
  const finished = new Set(run.s.records.map((record) => indexOf.get(record.id) ?? -1));
  const slots = run.o.limits.maxParallelSubtasks - running.size;
  const ready = startableSubtasks(plan, finished, running, slots);
  for (const index of ready) {
    // A stop while the last start was saved: nothing more starts.
    if (run.control.stopped) return;
    const progress: SubtaskProgress = {
      index,
      attempt: 0,
      triedFiles: [],
      lastAnswer: '',
      sees: run.s.records.map((record) => record.id),
    };
    run.s.current = [...run.s.current, progress].sort((a, b) => a.index - b.index);
    run.emit({ type: 'subtask-start', runId: run.runId, subtask: plan[index] as PlannedSubtask, index });
    await run.checkpoint('execute');
    launch(progress);
  }
}

/**
 * Records a subtask that ended, in plan order, with the files it and a subtask running beside it both wrote; a
 * failure no retry can cure ends the run.
 */
async function finishSubtask(run: StageContext, ended: Extract<Ended, { record: SubtaskRecord }>): Promise<void> {
  const { s } = run;
  const { record } = ended;
  const progress = s.current.find((p) => p.index === ended.index);
  // Every subtask that finished after this one started ran beside it for a while.
  const peers = s.records.filter((r) => !progress?.sees.includes(r.id)).map((r) => r.id);
  const conflicts = writeConflictsOf(record.id, peers, s.writes);
  if (conflicts.length) record.writeConflicts = conflicts;
  for (const { path, writers } of conflicts) {
    run.emit({
      type: 'run-warning',
      runId: run.runId,
      code: 'write-conflict',
      purpose: 'execute',
      scope: record.id,
      message:
        `${writers.join(' and ')} ran at the same time and both wrote ${path}; the file holds ` +
        `${writers.at(-1)}'s version.`,
    });
  }
  s.current = s.current.filter((p) => p.index !== ended.index);
  const plan = s.plan ?? [];
  const position = (id: string) => plan.findIndex((subtask) => subtask.id === id);
  s.records = [...s.records, record].sort((a, b) => position(a.id) - position(b.id));
  run.emit({ type: 'subtask-finish', runId: run.runId, record });
  await run.checkpoint('execute');
  if (record.status === 'failed') run.control.failFast(ended.lastError, 'execute');
}

/**
 * Runs a subtask's attempts, each in a fresh scope (and so a fresh file-preview budget). An attempt a snapshot
 * stopped in goes on first (inside its saved loop, when the snapshot holds one).
 */
async function runSubtask(
  run: StageContext,
  subtask: PlannedSubtask,
  progress: SubtaskProgress,
  signal: AbortSignal,
): Promise<{ record: SubtaskRecord; lastError: ExecutorResult['error'] }> {
  const { index } = progress;
  const seen = run.s.records.filter((record) => progress.sees.includes(record.id));
  const priorState = renderCheckpoints(
    seen.map((r) => toCheckpoint(r)),
    run.mark,
    errorsOf(seen),
  );
  let result: ExecutorResult | undefined;
  let goOn = progress.attempt > 0;
  // The paper retries a failed subtask; a run without decomposition has no subtasks, only its one loop.
  const attempts = run.o.decomposition ? run.o.limits.subtaskAttempts : 1;
  while ((goOn || progress.attempt < attempts) && !run.control.stopped && !signal.aborted) {
    const plan = run.s.plan ?? [];
    const iterations = run.budget.take(run.o.limits.maxIterations);
    try {
      if (iterations < 1) {
        // Only limits.maxRunIterations can leave a loop nothing: the run has used up its cap.
        run.control.stop('budget');
        break;
      }
      if (!goOn) {
        progress.attempt += 1;
        run.emit({
          type: 'subtask-attempt',
          runId: run.runId,
          subtaskId: subtask.id,
          attempt: progress.attempt,
          ...(progress.previousError ? { previousError: progress.previousError } : {}),
        });
        await run.checkpoint('execute');
      }
      goOn = false;
      result = await runAttempt(run, {
        scope: progress.attempt === 1 ? subtask.id : `${subtask.id}-attempt-${progress.attempt}`,
        objective: run.o.decomposition
          ? renderSubtaskObjective({
              plan,
              index,
              attachments: run.attachments,
              alongside: run.s.current.filter((p) => p.index !== index).map((p) => p.index),
              previousError: progress.previousError,
              mark: run.mark,
            })
          : renderDirectObjective({ attachments: run.attachments, mark: run.mark }),
        priorState,
        maxIterations: iterations,
        signal,
      });
    } finally {
      run.budget.release(iterations);
    }
    progress.triedFiles.push(...result.files);
    if (result.interruptedCalls?.length) {
      progress.interruptedCalls = [...(progress.interruptedCalls ?? []), ...result.interruptedCalls];
    }
    if (result.answer.trim()) progress.lastAnswer = result.answer;
    if (result.status === 'completed') break;
    progress.previousError = result.error?.message ?? `the attempt ended with status ${result.status}`;
    // Another attempt cannot cure wrong credentials or an unknown model: the stage ends the run instead.
    if (result.error && FATAL_ERROR_CODES.has(result.error.code)) break;
  }
  const completed = result?.status === 'completed';
  const answer = completed ? (result?.answer ?? '') : progress.lastAnswer;
  // A failed subtask keeps every file its attempts wrote: they are the material synthesis can still use.
  const files = completed ? [...(result?.files ?? [])] : [...new Set(progress.triedFiles)];
  const error = completed ? undefined : (progress.previousError ?? run.control.message());
  const errorCode = completed ? undefined : result?.error?.code;
  const answerFile = await saveLongAnswer(run.workspace, subtask.id, answer, {
    runId: run.runId,
    emit: run.emit,
    scope: subtask.id,
  });
  const record: SubtaskRecord = {
    ...subtask,
    status: completed ? 'completed' : 'failed',
    attempts: progress.attempt,
    answer,
    files,
    ...(answerFile ? { answerFile } : {}),
    ...(error ? { error } : {}),
    ...(errorCode ? { errorCode } : {}),
    ...(progress.interruptedCalls?.length ? { interruptedCalls: [...progress.interruptedCalls] } : {}),
  };
  return { record, lastError: result?.error };
}

async function runAttempt(
  run: StageContext,
  input: { scope: string; objective: string; priorState: string; maxIterations: number; signal: AbortSignal },
): Promise<ExecutorResult> {
  const executor = run.roles.executorFor('execute');
  const result = await run.control.guard('execute', () =>
    executor.run({
      runId: run.runId,
      purpose: 'execute',
      scope: input.scope,
      request: run.task,
      objective: input.objective,
      ...(input.priorState ? { priorState: input.priorState } : {}),
      workspace: run.workspace,
      signal: input.signal,
      maxIterations: input.maxIterations,
      timeoutMs: run.control.timeLeft(),
      dataMark: run.mark,
    }),
  );
  run.book(result, 'execute');
  return result;
}

function errorsOf(records: readonly SubtaskRecord[]): Map<string, string> {
  return new Map(records.flatMap((r) => (r.error ? [[r.id, r.error] as const] : [])));
}
