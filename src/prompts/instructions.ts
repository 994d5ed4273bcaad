/**
 * The host application's instructions, appended to the built-in (or overridden) prompt of the roles they name.
 * @module
 */

/** Roles that take instructions: the pipeline's five and managed mode's manager and auditor. */
export const INSTRUCTED_ROLES = ['plan', 'execute', 'synthesize', 'verify', 'repair', 'manage', 'audit'] as const;

/** A role that takes instructions. */
export type InstructedRole = (typeof INSTRUCTED_ROLES)[number];

/** Instructions per role, after `createHarness` resolved a plain string into one for every role. */
export type RoleInstructions = { [Role in InstructedRole]?: string | undefined };

/**
 * `prompt` with the application's `instructions` after it, under a heading of their own, so the model reads them as
 * the host's and the role's own rules stay whole before them. No instructions: `prompt` unchanged. The instructions
 * are the host's trusted text: never rendered as a template, so `{{…}}` in them stays as written.
 */
export function withInstructions(prompt: string, instructions: string | undefined): string {
  return instructions ? `${prompt}\n\n# Instructions from the application\n\n${instructions}` : prompt;
}
