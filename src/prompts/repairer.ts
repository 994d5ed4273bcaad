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
