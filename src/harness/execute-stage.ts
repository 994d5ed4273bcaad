/**
 * The pipeline's execute stage: each planned subtask in a fresh executor loop, retried up to
 * `limits.subtaskAttempts` times. Each subtask's progress is recorded in the run's state, so that a resumed run
 * takes the stage up in the subtask and attempt it stopped in.
 * @module
 */
import type { ExecutorResult } from '../executor/types.js';
import { saveLongAnswer } from '../pipeline/answers.js';
import { renderCheckpoints, toCheckpoint } from '../pipeline/checkpoints.js';
import type { PlannedSubtask, SubtaskRecord } from '../pipeline/types.js';
import { renderSubtaskObjective } from '../prompts/subtask.js';
import type { SubtaskProgress } from './pipeline-state.js';
import { FATAL_ERROR_CODES } from './run-control.js';
import type { StageContext } from './stage-context.js';

/** Runs the subtasks not yet recorded, the one a snapshot stopped in first. @internal */
export async function executeStage(run: StageContext): Promise<void> {
  const { s } = run;
  const plan = s.plan ?? [];
  for (let index = s.records.length; index < plan.length; index++) {
    const subtask = plan[index] as PlannedSubtask;
    if (run.control.stopped) {
      s.records.push({ ...subtask, status: 'skipped', attempts: 0, answer: '', files: [] });
      continue;
    }
    if (s.current?.index !== index) {
      s.current = { index, attempt: 0, triedFiles: [], lastAnswer: '' };
      run.emit({ type: 'subtask-start', runId: run.runId, subtask, index });
      await run.checkpoint('execute');
    }
    const { record, lastError } = await runSubtask(run, subtask, s.current);
    s.records.push(record);
    s.current = null;
    run.emit({ type: 'subtask-finish', runId: run.runId, record });
    await run.checkpoint('execute');
    if (record.status === 'failed') run.control.failFast(lastError, 'execute');
  }
  run.control.check('execute');
}

/**
 * Runs a subtask's attempts, each in a fresh scope (and so a fresh file-preview budget). An attempt a snapshot
 * stopped in goes on first (inside its saved loop, when the snapshot holds one).
 */
async function runSubtask(
  run: StageContext,
  subtask: PlannedSubtask,
  progress: SubtaskProgress,
): Promise<{ record: SubtaskRecord; lastError: ExecutorResult['error'] }> {
  const { index } = progress;
  const priorState = renderCheckpoints(
    run.s.records.map((r) => toCheckpoint(r)),
    run.mark,
    errorsOf(run.s.records),
  );
  let result: ExecutorResult | undefined;
  let goOn = progress.attempt > 0;
  while ((goOn || progress.attempt < run.o.limits.subtaskAttempts) && !run.control.stopped) {
    const iterations = run.budget.forSubtask(index);
    if (iterations < 1) {
      progress.previousError ??=
        'No iterations were left for this subtask: the rest of limits.maxIterations is reserved for later stages.';
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
      objective: renderSubtaskObjective({
        plan: run.s.plan ?? [],
        index,
        attachments: run.attachments,
        previousError: progress.previousError,
        mark: run.mark,
      }),
      priorState,
      maxIterations: iterations,
    });
    progress.triedFiles.push(...result.files);
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
  };
  return { record, lastError: result?.error };
}

async function runAttempt(
  run: StageContext,
  input: { scope: string; objective: string; priorState: string; maxIterations: number },
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
      signal: run.control.controller.signal,
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
