/**
 * The starting state of a run that continues a finished one (`run({ continueFrom })`): the earlier request, its
 * deliverable, its verdict and its files, bounded like a checkpoint and marked as data; never its tool traces.
 * @module
 */
import type { Deliverable, RunResult, Verdict } from '../contracts/work.js';
import { headTail } from '../memory/truncate.js';
import type { DataMark } from '../prompts/datamark.js';
import { PASSED_ANSWER_CHARS } from './answers.js';

/** Defects of the earlier verdict shown, at most; the rest are counted. */
const SHOWN_DEFECTS = 10;

/** What a continuing run starts from. @internal */
export interface ContinuedRun {
  runId: string;
  /** The earlier request, when known (a run continued by its id: from its snapshot). */
  task?: string | undefined;
  status: RunResult['status'];
  deliverable: Deliverable;
  verdicts: readonly Verdict[];
}

/**
 * The new request with the earlier run's state after it: the answer bounded as a checkpoint's, file names, the last
 * verdict and its defects, each as marked data.
 */
export function continuationTask(task: string, previous: ContinuedRun, mark: DataMark): string {
  const { deliverable } = previous;
  const answer = headTail(
    deliverable.answer || '(no text answer)',
    PASSED_ANSWER_CHARS,
    'the rest of the earlier answer is not shown',
  );
  const lines = [
    task,
    '',
    `## Earlier work this request continues (run ${mark.inline(previous.runId)}, status ${previous.status})`,
    'The workspace holds its files as it left them: build on them, change what this request asks for, keep the rest.',
    ...(previous.task === undefined
      ? []
      : ['Earlier request:', mark.block(headTail(previous.task, PASSED_ANSWER_CHARS))]),
    'Earlier answer:',
    mark.block(answer),
    `Earlier files: ${mark.names(deliverable.files)}`,
    `Earlier verdict: ${verdictLine(previous.verdicts.at(-1), mark)}`,
  ];
  return lines.join('\n');
}

function verdictLine(verdict: Verdict | undefined, mark: DataMark): string {
  if (!verdict) return 'none (the earlier run was not verified)';
  if (verdict.status === 'passed') return 'passed';
  if (verdict.status === 'unverified') return 'none could be obtained (unverified)';
  const shown = verdict.defects.slice(0, SHOWN_DEFECTS).map((d) => `- ${mark.inline(headTail(d.description, 500))}`);
  const more = verdict.defects.length > SHOWN_DEFECTS ? [`- … and ${verdict.defects.length - SHOWN_DEFECTS} more`] : [];
  return ['failed, with these defects:', ...shown, ...more].join('\n');
}
