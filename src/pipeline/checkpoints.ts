/**
 * Rendering of the compact state handed from one executor loop to the next.
 * @module
 */
import { DEFAULTS } from '../defaults.js';
import { headTail } from '../memory/truncate.js';
import { dataBlock } from '../prompts/template.js';
import type { Checkpoint, Deliverable, SubtaskRecord } from './types.js';

/**
 * Longest answer a checkpoint passes on whole: later prompts hold every earlier checkpoint, and they must fit
 * beside the request in the window. Longer answers keep their head and tail and name the saved full answer.
 */
export const CHECKPOINT_ANSWER_CHARS = DEFAULTS.toolMessageChars;

/** The checkpoint a subtask hands on: its answer (bounded) and file handles, never its tool trace. */
export function toCheckpoint(record: SubtaskRecord): Checkpoint {
  const note = record.answerFile ? `full answer in ${record.answerFile}; read_file it if needed` : 'answer shortened';
  return {
    subtaskId: record.id,
    title: record.title,
    status: record.status === 'completed' ? 'completed' : 'failed',
    answer: headTail(record.answer, CHECKPOINT_ANSWER_CHARS, note),
    files: [...record.files],
  };
}

/** Renders checkpoints as the prior state of a later executor loop. */
export function renderCheckpoints(checkpoints: readonly Checkpoint[], errors: ReadonlyMap<string, string> = new Map()): string {
  if (!checkpoints.length) return '';
  const blocks = checkpoints.map((c) => {
    const head = `### ${c.subtaskId}: ${c.title} (${c.status.toUpperCase()})`;
    const error = errors.get(c.subtaskId);
    const why = c.status === 'failed' && error ? `\nIt failed: ${error}` : '';
    const answer = dataBlock('ANSWER', c.answer || '(no answer)');
    const files = `Files: ${c.files.length ? c.files.join(', ') : '(none)'}`;
    return `${head}${why}\n${answer}\n${files}`;
  });
  return `Results of the earlier subtasks (answers and files only):\n\n${blocks.join('\n\n')}`;
}

/** Renders a deliverable as the prior state of a repair loop. */
export function renderDeliverable(deliverable: Deliverable): string {
  return [
    'Current deliverable:',
    dataBlock('ANSWER', deliverable.answer || '(empty)'),
    `Files: ${deliverable.files.length ? deliverable.files.join(', ') : '(none)'}`,
  ].join('\n');
}

/** What the run can still hand back when synthesis did not happen: completed answers and their files. */
export function partialDeliverable(records: readonly SubtaskRecord[]): Deliverable {
  const done = records.filter((r) => r.status === 'completed');
  return {
    answer: done.map((r) => (done.length > 1 ? `## ${r.title}\n\n${r.answer}` : r.answer)).join('\n\n'),
    files: [...new Set(done.flatMap((r) => r.files))],
  };
}
