/**
 * The repairer's instructions (purpose `repair`), given to an executor loop as its objective.
 * @module
 */

/** Default repair objective. Placeholders: `{{attempt}}`, `{{defects}}`. */
export const REPAIRER_PROMPT = `Repair {{attempt}}: a review of the current deliverable for the original request found these defects:

{{defects}}

Fix these defects, and only these, in the current deliverable shown below. Edit or rewrite the affected files in the
workspace with the tools; keep everything that is already right. Do not redo the whole task.
Finish by calling submit_answer with the complete corrected answer text and the workspace-relative paths of every file
that belongs to the deliverable (including unchanged ones).`;

/** Said after the repair objective when the loop is shown the subtasks' results. */
export const REPAIR_MATERIAL_NOTE =
  'The results of the subtasks the deliverable was built from are shown after it: use what they found and the files ' +
  'they wrote as material for the fixes (open a file when you need its content).';

/** Said after the repair objective when earlier repairs fixed defects. Placeholder: `{{fixed}}`, the numbered list. */
export const FIXED_DEFECTS_NOTE = `Earlier reviews also found these defects, which earlier repairs fixed; keep them fixed, and do not undo
the changes that fixed them:

{{fixed}}`;
