/**
 * Long answers handed on to later prompts: the full text is saved in the workspace, and prompts get its head and
 * tail with a marker naming the saved file. One rule for subtask answers, checkpoints and the deliverable.
 * @module
 */
import { DEFAULTS } from '../defaults.js';
import { toHarnessError } from '../errors.js';
import type { EmitEvent } from '../events.js';
import { headTail } from '../memory/truncate.js';
import type { Workspace } from '../workspace/types.js';

/** Where full answers are saved, relative to the workspace root. */
export const ANSWERS_DIR = '.harness/answers';

/**
 * Longest answer a later prompt holds whole: prompts hold several earlier answers, and they must fit beside the
 * request in the window. Longer answers keep their head and tail and name the saved full answer.
 */
export const PASSED_ANSWER_CHARS = DEFAULTS.toolMessageChars;

/** An answer as a prompt shows it: whole, or head and tail naming where the rest is. */
export function boundAnswer(answer: string, maxChars: number = PASSED_ANSWER_CHARS, savedTo?: string): string {
  const note = savedTo ? `full answer in ${savedTo}; read_file it if needed` : 'the full answer could not be saved';
  return headTail(answer, maxChars, note);
}

/**
 * Saves an answer longer than {@link PASSED_ANSWER_CHARS} under `.harness/answers/<name>.md` through the workspace and
 * returns its workspace-relative path; undefined when the answer is short enough to pass on whole. A failed save is
 * never silent: it emits a `run-warning` (`answer-save-failed`) and returns undefined, so prompts say the rest is lost.
 */
export async function saveLongAnswer(
  workspace: Workspace,
  name: string,
  answer: string,
  report: { runId: string; emit?: EmitEvent | undefined; scope?: string },
): Promise<string | undefined> {
  if (answer.length <= PASSED_ANSWER_CHARS) return undefined;
  const relative = `${ANSWERS_DIR}/${name.replace(/[^\w.-]/g, '_')}.md`;
  try {
    await workspace.writeFile(relative, answer, { tool: 'harness', ...(report.scope ? { scope: report.scope } : {}) });
    return relative;
  } catch (error) {
    report.emit?.({
      type: 'run-warning',
      runId: report.runId,
      code: 'answer-save-failed',
      message:
        `The full ${answer.length}-character answer of ${name} could not be saved to ${relative} ` +
        `(${toHarnessError(error).message}); later steps see only its head and tail.`,
      ...(report.scope ? { scope: report.scope } : {}),
    });
    return undefined;
  }
}
