/**
 * Rendering of the compact state handed from one executor loop to the next.
 * @module
 */
import type { DataMark } from '../prompts/datamark.js';
import { boundAnswer, PASSED_ANSWER_CHARS } from './answers.js';
import type { Checkpoint, Deliverable, InterruptedCall, SubtaskRecord } from '../contracts/work.js';

/** The checkpoint a subtask hands on: its answer (bounded to `maxChars`) and file handles, never its tool trace. */
export function toCheckpoint(record: SubtaskRecord, maxChars: number = PASSED_ANSWER_CHARS): Checkpoint {
  return {
    subtaskId: record.id,
    title: record.title,
    status: record.status === 'completed' ? 'completed' : 'failed',
    answer: boundAnswer(record.answer, maxChars, record.answerFile),
    files: [...record.files],
  };
}

/** Renders checkpoints as the prior state of a later executor loop; answers, file names and errors are marked data. */
export function renderCheckpoints(
  checkpoints: readonly Checkpoint[],
  mark: DataMark,
  errors: ReadonlyMap<string, string> = new Map(),
): string {
  if (!checkpoints.length) return '';
  const blocks = checkpoints.map((c) => {
    const head = `### ${c.subtaskId}: ${mark.neutralize(c.title)} (${c.status.toUpperCase()})`;
    const error = errors.get(c.subtaskId);
    const why = c.status === 'failed' && error ? `\nIt failed: ${mark.inline(error)}` : '';
    const answer = `Answer:\n${mark.block(c.answer || '(no answer)')}`;
    return `${head}${why}\n${answer}\nFiles: ${mark.names(c.files)}`;
  });
  return `Results of the earlier subtasks (answers and files only):\n\n${blocks.join('\n\n')}`;
}

/**
 * Renders the checkpoints of `records` as a later loop sees them: each answer bounded, its files named, a failed one
 * with its error (see {@link toCheckpoint} and {@link renderCheckpoints}); '' for none.
 */
export function renderRecords(records: readonly SubtaskRecord[], mark: DataMark): string {
  const errors = new Map(records.flatMap((r) => (r.error ? [[r.id, r.error] as const] : [])));
  return renderCheckpoints(
    records.map((r) => toCheckpoint(r)),
    mark,
    errors,
  );
}

/** Renders a deliverable as the prior state of a repair loop; its answer and file names are marked data. */
export function renderDeliverable(deliverable: Deliverable, mark: DataMark): string {
  return [
    'Current deliverable:',
    'Answer:',
    mark.block(deliverable.answer || '(empty)'),
    `Files: ${mark.names(deliverable.files)}`,
  ].join('\n');
}

/**
 * The candidate deliverable before (or instead of) synthesis: the completed subtasks' answers, and every file any
 * subtask wrote, failed ones included — nothing a run produced is dropped from what it hands back.
 */
export function partialDeliverable(records: readonly SubtaskRecord[]): Deliverable {
  const done = records.filter((r) => r.status === 'completed');
  return withInterruptedCalls(
    {
      answer: done.map((r) => (done.length > 1 ? `## ${r.title}\n\n${r.answer}` : r.answer)).join('\n\n'),
      files: [...new Set(records.flatMap((r) => r.files))],
    },
    records.flatMap((r) => r.interruptedCalls ?? []),
  );
}

/** `deliverable` naming `calls` as the calls a crash interrupted in the loops that made it (none: no such field). */
export function withInterruptedCalls(deliverable: Deliverable, calls: readonly InterruptedCall[]): Deliverable {
  const { interruptedCalls: _replaced, ...rest } = deliverable;
  return calls.length ? { ...rest, interruptedCalls: [...calls] } : rest;
}
