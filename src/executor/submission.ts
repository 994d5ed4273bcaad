/**
 * The built-in `submit_answer` tool that ends an executor loop: its schema, its spec and the parsing of a call.
 * @module
 */
import { z } from 'zod';
import type { ToolSpec } from '../backend/types.js';
import { SUBMIT_ANSWER_TOOL } from '../prompts/executor.js';
import { toWorkspaceRelative } from '../tools/registry.js';

const SubmitSchema = z.object({
  answer: z.string().describe('The complete answer to the objective.'),
  files: z.array(z.string()).default([]).describe('Workspace-relative paths of the files that are part of the answer.'),
});

/** The spec offered to the model beside the registry's tools. */
export const SUBMIT_SPEC: ToolSpec = (() => {
  const inputSchema = z.toJSONSchema(SubmitSchema, { io: 'input' }) as Record<string, unknown>;
  delete inputSchema.$schema;
  return {
    name: SUBMIT_ANSWER_TOOL,
    description: 'Ends your work: submits the final answer and the workspace-relative paths of the files you produced.',
    inputSchema,
  };
})();

/** A parsed `submit_answer` call: its answer and de-duplicated workspace-relative files, or the error to show the model. */
export type Submission = { ok: true; value: { answer: string; files: string[] } } | { ok: false; error: string };

/** Parses the arguments of a `submit_answer` call; files outside the workspace make it an error. */
export function parseSubmission(raw: string, root: string): Submission {
  let value: unknown;
  try {
    value = raw.trim() === '' ? {} : JSON.parse(raw);
  } catch (error) {
    return {
      ok: false,
      error: `Invalid arguments for tool "${SUBMIT_ANSWER_TOOL}": they are not valid JSON (${error instanceof Error ? error.message : String(error)}). Send { "answer": string, "files": string[] }.`,
    };
  }
  const parsed = SubmitSchema.safeParse(value);
  if (!parsed.success) {
    const fields = parsed.error.issues.map(
      (issue) => `- ${issue.path.join('.') || '(the whole input)'}: ${issue.message}`,
    );
    return {
      ok: false,
      error: `Invalid arguments for tool "${SUBMIT_ANSWER_TOOL}":\n${fields.join('\n')}\nSend { "answer": string, "files": string[] }.`,
    };
  }
  const files: string[] = [];
  const outside: string[] = [];
  for (const file of parsed.data.files) {
    const relative = toWorkspaceRelative(file, root);
    if (relative === undefined) outside.push(file);
    else if (!files.includes(relative)) files.push(relative);
  }
  if (outside.length > 0) {
    return {
      ok: false,
      error: `Invalid arguments for tool "${SUBMIT_ANSWER_TOOL}": files must be workspace-relative paths inside the workspace; these are not: ${outside.join(', ')}.`,
    };
  }
  return { ok: true, value: { answer: parsed.data.answer, files } };
}
