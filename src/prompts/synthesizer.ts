/**
 * The synthesizer's instructions (purpose `synthesize`), given to an executor loop as its objective.
 * @module
 */

/**
 * Default synthesis objective. Placeholders: `{{subtaskCount}}`, `{{failedCount}}`. The synthesizer adds the failed
 * subtasks, and what to do about them, after it only when some failed.
 */
export const SYNTHESIZER_PROMPT = `Synthesis: turn the results of the {{subtaskCount}} subtask(s) below into the final deliverable for the
original request.

- Build exactly what the original request asks for: its format, files, language, length and every stated constraint.
  When it asks for a file, write that file into the workspace (use the tools) and deliver its path.
- Use the subtask answers and files as your material; open files when you need their content. Fix inconsistencies
  between them instead of copying them through.
- Where the results lack something the request asks for, say plainly in the answer what is missing. Never claim work
  that was not done.
- Finish by calling submit_answer with the final answer text and the workspace-relative paths of every file that belongs
  to the deliverable.`;

/** Said after the objective when subtasks failed. Placeholders: `{{failedCount}}`, `{{failed}}` (their ids and titles). */
export const FAILED_SUBTASKS_NOTE =
  '{{failedCount}} subtask(s) failed: {{failed}}. Fill those gaps yourself where you can; where you cannot, say ' +
  'plainly in the answer what is missing.';
