/**
 * The planner's instructions (purpose `plan`). Adapted from OneDayAgent Appendix D.
 * @module
 */

/**
 * Default system prompt of the planner. Placeholders: `{{maxSubtasks}}`, and the facts of the run it plans for
 * (see {@link PlannerFacts}): `{{agent}}`, `{{parallelism}}`.
 */
export const PLANNER_PROMPT = `You plan how an autonomous agent will carry out a user's request.

Split the request into an ordered list of at most {{maxSubtasks}} subtasks. Each subtask is a bounded unit of work that
{{agent}} can finish on its own and sum up in a short answer plus any files it writes. A subtask sees only the answers
and files of the subtasks it depends on (and of any other finished before it starts), never how they were produced, so
each subtask must name exactly what it hands on.

Guidelines:
- Keep the user's request as the goal: every explicit constraint, format, length, language, file type and deadline in
  it must be covered by some subtask, and implicit requirements (what a careful person would also deliver) too.
- Use as few subtasks as the work needs; a simple request is one subtask. Do not add review-only subtasks: the
  harness assembles the subtask results into the final deliverable itself.
- Order the subtasks so that each one's inputs exist before it starts.
- "dependsOn": 0-based indices of the earlier subtasks (the first is 0) whose results this one truly needs.
  {{parallelism}}
- "objective" says what to do, concretely; "expectedOutput" says what the subtask hands on (facts, a file path, …).
- Attached files, when there are any, are listed with bounded previews of their content where available; plan with
  what they hold, and let subtasks that need more read the files themselves.

Reply with JSON only, in exactly this shape:
{"subtasks":[{"title":"short title","objective":"what to do","expectedOutput":"what to hand on","dependsOn":[]}]}`;

/**
 * What the planner's prompt says about the run it plans for; a fact left out is said in words true of any run. Whether
 * the run verifies is deliberately not among them: the plan request of an ablation with verification off must be the
 * same as with it on, so the prompt says nothing of verification either way.
 */
export interface PlannerFacts {
  /** Names of the tools each subtask's agent has. */
  tools?: readonly string[];
  /** Whether subtasks whose dependencies have finished may run at the same time (`limits.maxParallelSubtasks` > 1). */
  parallel?: boolean;
}

/** The values of the planner prompt's fact placeholders. */
export function plannerFactValues(facts: PlannerFacts): { agent: string; parallelism: string } {
  const { tools, parallel } = facts;
  const agent =
    tools === undefined
      ? 'one agent with tools'
      : tools.length
        ? `one agent with the tools ${listed(tools)}`
        : 'one agent without tools';
  const parallelism =
    parallel === false
      ? 'Subtasks run one at a time, in plan order, and each sees the results of every earlier one; give independent ' +
        'work, such as separate research branches, [] all the same.'
      : 'Independent work, such as separate research branches, gets [] and may run at the same time as the rest; ' +
        'without "dependsOn" a subtask waits for every earlier one. Subtasks that may run at the same time must not ' +
        'write the same file.';
  return { agent, parallelism };
}

/** Tools named in the prompt at most; the rest are counted (an MCP server can bring many). */
const MAX_NAMED_TOOLS = 40;

function listed(tools: readonly string[]): string {
  const named = tools.slice(0, MAX_NAMED_TOOLS).join(', ');
  return tools.length > MAX_NAMED_TOOLS ? `${named} and ${tools.length - MAX_NAMED_TOOLS} more` : named;
}
