/**
 * Options of managed mode (`createHarness({ mode: 'managed', managed: { … } })`) and their defaults.
 * @module
 */
import { z } from 'zod';
import { HarnessError } from '../../errors.js';
import { describeIssues } from '../../util/did-you-mean.js';
import type { AgentAdapter } from '../../contracts/agent-adapter.js';
import type { AuditorLike, ManagerLike, OnAsk } from '../../contracts/managed.js';

/** Every default of managed mode in one place. */
export const MANAGED_DEFAULTS = {
  /** Manager decisions per run (LongHorizon-Harness); a round is one decision and, for `execute`, its execution and audit. */
  maxRounds: 20,
  /** ReAct iterations of the built-in executor in one round (within the run's `limits.maxIterations`). */
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
const adapter = z.custom<AgentAdapter>(
  (value) => hasMethod('runEpisode')(value) && typeof (value as { name?: unknown }).name === 'string',
  'must be an AgentAdapter ({ name, runEpisode }): harnessAgent(), commandAgent({ … }) or functionAgent(fn)',
);

/** The `managed` options of `createHarness`. */
export const ManagedOptionsSchema = z.strictObject({
  /** Manager decisions per run. @defaultValue 20 */
  maxRounds: z.number().int().min(1).default(MANAGED_DEFAULTS.maxRounds),
  /** ReAct iterations of the built-in executor per round. @defaultValue 50 */
  executorIterations: z.number().int().min(1).default(MANAGED_DEFAULTS.executorIterations),
  /** ReAct iterations of the built-in auditor per round. @defaultValue 30 */
  auditorIterations: z.number().int().min(1).default(MANAGED_DEFAULTS.auditorIterations),
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
    `Invalid managed options: ${problems.join('; ')}. maxRounds, executorIterations and auditorIterations are integers ≥ 1; see docs/managed.md.`,
  );
}
