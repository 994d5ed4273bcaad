/**
 * Options of managed mode (`createHarness({ mode: 'managed', managed: { … } })`) and their defaults.
 * @module
 */
import { z } from 'zod';
import { HarnessError } from '../../errors.js';
import { describeIssues } from '../../util/did-you-mean.js';
import type { AgentAdapter } from '../../contracts/agent-adapter.js';
import type { AuditorLike, ManagerLike, OnAsk } from '../../contracts/managed.js';
import type { Tool } from '../../tools/types.js';
import { docsUrl } from '../../project-links.js';

/** Every default of managed mode in one place. */
export const MANAGED_DEFAULTS = {
  /** Manager decisions per run (LongHorizon-Harness); a round is one decision and, for `execute`, its execution and audit. */
  maxRounds: 20,
  /** ReAct iterations of the built-in executor in one round (at most `limits.maxIterations`, the bound of one loop). */
  executorIterations: 50,
  /** ReAct iterations of the built-in auditor in one round, its one re-ask included. */
  auditorIterations: 30,
  /** Characters of one evidence item's `check` and `observed` kept in the task state (head and tail). */
  evidenceChars: 1_000,
  /** Audit reports the manager sees in full; older ones are one line each, so its request stays small over many rounds. */
  managerReportsShown: 6,
  /** Evidence items per record shown in prompts (the newest); the state file keeps them all. */
  evidenceShown: 3,
  /** Characters of stdout and of stderr `commandAgent` keeps per episode (head and tail) before the memory bounds them. */
  agentOutputLimit: 200_000,
  /** How long `commandAgent` waits for a killed process group's last process to be reaped before it returns. */
  reapWaitMs: 5_000,
} as const;

const isFn = (value: unknown): boolean => typeof value === 'function';
const hasMethod = (name: string) => (value: unknown) =>
  typeof value === 'object' && value !== null && typeof (value as Record<string, unknown>)[name] === 'function';
const tool = z.custom<Tool>(
  (value) => hasMethod('execute')(value) && typeof (value as { name?: unknown }).name === 'string',
  'must be a Tool (create one with defineTool)',
);
const readOnlyToolList = z.array(tool).superRefine((tools, ctx) => {
  const writing = tools.filter((t) => !t.readOnly).map((t) => t.name);
  if (writing.length) {
    ctx.addIssue({
      code: 'custom',
      message: `must be read-only tools (readOnly: true); not read-only: ${writing.join(', ')}. Pass readOnlyTools(tools), or executeCommandTool({ workspaceAccess: 'read-only' }) for commands`,
    });
  }
});
const adapter = z.custom<AgentAdapter>(
  (value) => hasMethod('runEpisode')(value) && typeof (value as { name?: unknown }).name === 'string',
  'must be an AgentAdapter ({ name, runEpisode }): harnessAgent(), commandAgent({ … }) or functionAgent(fn)',
);

/** The `managed` options of `createHarness`. */
export const ManagedOptionsSchema = z.strictObject({
  /** Manager decisions per run. @defaultValue 20 */
  maxRounds: z.number().int().min(1).default(MANAGED_DEFAULTS.maxRounds),
  /**
   * ReAct iterations of the built-in executor per round; `limits.maxIterations`, the bound of one loop, caps it.
   * @defaultValue 50
   */
  executorIterations: z.number().int().min(1).default(MANAGED_DEFAULTS.executorIterations),
  /**
   * ReAct iterations of the built-in auditor per round, its re-ask included; `limits.maxIterations` caps it.
   * @defaultValue 30
   */
  auditorIterations: z.number().int().min(1).default(MANAGED_DEFAULTS.auditorIterations),
  /**
   * The final global check: before the run ends `succeeded`, the Verifier (the `verify` role, as in the pipeline)
   * judges the manager's final answer and the files the executors produced against the original request; a failed
   * check goes back to the manager, a verdict that cannot be had ends the run `unverified`. `false` ends on the
   * completion gate alone, as LongHorizon-Harness does (the ablation).
   * @defaultValue true
   */
  finalVerification: z.boolean().default(true),
  /** The built-in executor's tools. @defaultValue every tool of the harness (`tools`) */
  executorTools: z.array(tool).optional(),
  /**
   * The built-in auditor's tools, each `readOnly` (others are refused with `invalid-options`); `read_file` and
   * `list_files` are added when missing.
   * @defaultValue the harness's read-only tools, plus a read-only `execute_command` (the workspace mounted read-only,
   * no network) where bubblewrap is available
   */
  auditorTools: readOnlyToolList.optional(),
  /**
   * Answers the manager's questions (`next: 'ask'`); the answer goes to the manager as a user message. Without it a
   * question ends the run `blocked`.
   */
  onAsk: z.custom<OnAsk>(isFn, 'must be a function (question, state) => string | Promise<string>').optional(),
  /** Who executes and who audits: the built-in ReAct loop (`harnessAgent()`, the default) or an external agent. */
  agents: z
    .strictObject({
      executor: adapter.optional(),
      auditor: adapter.optional(),
    })
    .prefault({}),
  /** Replacements for the manager and the auditor. A replaced auditor is still fingerprinted. */
  components: z
    .strictObject({
      manager: z.custom<ManagerLike>(hasMethod('decide'), 'must have decide(input)').optional(),
      auditor: z.custom<AuditorLike>(hasMethod('audit'), 'must have audit(input)').optional(),
    })
    .prefault({}),
  /** System prompts of the manager and of the built-in auditor (the external auditor's prompt starts with it too). */
  prompts: z
    .strictObject({
      manage: z.string().trim().min(1).optional(),
      audit: z.string().trim().min(1).optional(),
    })
    .prefault({}),
});

/** What hosts pass as `managed`. */
export type ManagedOptions = z.input<typeof ManagedOptionsSchema>;
/** The `managed` options after defaults. */
export type ResolvedManagedOptions = z.output<typeof ManagedOptionsSchema>;

/** Validates managed options (also already-parsed ones); a bad one throws `invalid-options` naming it. */
export function parseManagedOptions(options: ManagedOptions | undefined): ResolvedManagedOptions {
  const parsed = ManagedOptionsSchema.safeParse(options ?? {});
  if (parsed.success) return parsed.data;
  const problems = describeIssues(parsed.error.issues, { schema: ManagedOptionsSchema, prefix: 'managed' });
  throw new HarnessError(
    'invalid-options',
    `Invalid managed options: ${problems.join('; ')}. maxRounds, executorIterations and auditorIterations are integers ≥ 1; see ${docsUrl('managed.md')}.`,
  );
}
