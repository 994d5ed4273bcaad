/**
 * Options of `createHarness`, validated once when the harness is created.
 * @module
 */
import { z } from 'zod';
import type { LlmBackend, Purpose } from '../../backend/types.js';
import { DEFAULTS } from '../../defaults.js';
import { ManagedOptionsSchema } from './managed-options.js';
import { HarnessError } from '../../errors.js';
import { describeIssues } from '../../util/did-you-mean.js';
import { CurrencySchema, PricingSchema } from '../../backend/pricing.js';
import { checkCostOptions } from './cost.js';
import { EXECUTION_MEMORY_SHAPE, isExecutionMemory, type ExecutionMemory } from '../../memory/types.js';
import type { MemoryManagerOptions } from '../../memory/options.js';
import { ToolRegistry } from '../../tools/registry.js';
import type { Tool } from '../../tools/types.js';
import type { HarnessEvent } from '../../events.js';
import { isWorkspace, type Workspace } from '../../workspace/types.js';
import type { ExecutorLike } from '../../contracts/executor.js';
import type { PlannerLike, RepairerLike, SynthesizerLike, VerifierLike } from '../../contracts/roles.js';
import { isRunStore } from '../../durability/is-run-store.js';
import type { RunStore } from '../../durability/types.js';
import { docsUrl } from '../../project-links.js';
import { INSTRUCTED_ROLES, type InstructedRole, type RoleInstructions } from '../../prompts/instructions.js';

const isFn = (value: unknown): boolean => typeof value === 'function';
const hasMethod = (name: string) => (value: unknown) =>
  typeof value === 'object' && value !== null && typeof (value as Record<string, unknown>)[name] === 'function';

const backend = z.custom<LlmBackend>(hasMethod('generate'), 'must be an LlmBackend (an object with generate())');
const tool = z.custom<Tool>(
  (v) => hasMethod('execute')(v) && typeof (v as { name?: unknown }).name === 'string',
  'must be a Tool (create one with defineTool)',
);
const workspaceSettings = z.strictObject({
  dir: z.string().min(1, 'must be a non-empty directory path').optional(),
  keep: z.boolean().optional(),
});
const workspace = z
  .union([z.string().min(1), z.custom<Workspace>(isWorkspace), workspaceSettings], {
    error: 'must be a directory path, a Workspace, or { dir?: string, keep?: boolean }',
  })
  .refine((v) => !(typeof v === 'object' && 'dir' in v && v.dir !== undefined && 'keep' in v && v.keep === false), {
    error:
      'keep: false removes temporary workspaces only; a directory you name (dir) is never removed. Drop one of them',
  });
const count = (fallback: number, min = 1) => z.number().int().min(min).default(fallback);
/** The longest delay a Node.js timer waits; a longer one fires at once (with a TimeoutOverflowWarning). */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** A duration in milliseconds that a timer can honour: longer ones are refused, not cut to 1 ms. */
const duration = (fallback: number) =>
  z
    .number()
    .int()
    .min(1)
    .max(MAX_TIMER_MS, {
      error:
        'must be at most 2147483647 ms (about 24.8 days), the longest delay a Node.js timer can wait. For longer ' +
        'work, resume the run after it times out (harness.resume)',
    })
    .default(fallback);

const LimitsSchema = z.strictObject({
  /**
   * ReAct iterations of one executor loop: each subtask attempt, and synthesis, gets this many (the paper's 200;
   * a repair gets `repairIterations`). Managed mode: see docs/managed.md. @defaultValue 200
   */
  maxIterations: count(DEFAULTS.maxIterations),
  /**
   * An optional cap on the ReAct iterations of the whole run (in managed mode, of its executor and audit loops): every
   * loop gets its own bound or what is left of this, whichever is less, and once it is used up the run ends `failed`
   * with `budget-exhausted`.
   * @defaultValue DEFAULTS.maxRunIterations (undefined: no cap; the run is bounded by its loops and `timeoutMs`)
   */
  maxRunIterations: z.number().int().min(1).optional(),
  /** Wall-clock limit of one run, at most 2 147 483 647 (a Node.js timer's longest delay). @defaultValue 7 200 000 */
  timeoutMs: duration(DEFAULTS.timeoutMs),
  /** @defaultValue 6 */
  maxSubtasks: count(DEFAULTS.maxSubtasks),
  /**
   * Subtasks that may run at the same time once the subtasks they depend on (the plan's `dependsOn`) have finished.
   * 1 runs them strictly in plan order, as the paper does; above 1 is opt-in: a subtask the planner wrongly marked
   * independent then never sees an earlier subtask's result (docs/pipeline.md, "Subtasks in parallel"). @defaultValue 1
   */
  maxParallelSubtasks: count(DEFAULTS.maxParallelSubtasks),
  /**
   * Attempts per planned subtask, the first included. Without decomposition the run's one loop is tried once, as in
   * the paper's DIRECT. @defaultValue 3
   */
  subtaskAttempts: count(DEFAULTS.subtaskAttempts),
  /** Repairs after failed verifications. @defaultValue 3 */
  repairAttempts: count(DEFAULTS.repairAttempts, 0),
  /** Iterations of one repair loop. @defaultValue 50 */
  repairIterations: count(DEFAULTS.repairIterations),
  /** Default per-call timeout of a tool, at most 2 147 483 647. @defaultValue 120 000 */
  toolTimeoutMs: duration(DEFAULTS.toolTimeoutMs),
  /**
   * Output tokens reserved for the answer of every request and sent as its output limit; a request's input may use
   * the window less this. Never more than a quarter of the called backend's window. @defaultValue 8 192
   */
  maxOutputTokens: count(DEFAULTS.maxOutputTokens),
  /**
   * The most the run's model calls may cost, in the currency of `pricing`: a call that could take the run past it is
   * not made, and the run ends `failed` with `cost-limit` and its partial deliverable. Needs a price for every role.
   * How a call is judged is `costLimit`'s choice.
   */
  maxCost: z.number().finite().positive().optional(),
  /**
   * How `maxCost` is kept. `'hard'`: a call is made only if, at its worst case (every input token at the dearer of
   * the input and cache-write prices, and its whole output reserve, `maxOutputTokens`), the run stays within the
   * limit; the run never spends more. `'soft'`: calls are made while the run has spent less than the limit; the call
   * that crosses it finishes, then the run stops, having spent at most that call (and any running beside it) more.
   * @defaultValue 'hard'
   */
  costLimit: z.enum(['hard', 'soft']).default('hard'),
});

/** Temperature and top-p of a role's calls; `null` sends none (for models that reject the parameter). */
const SamplingSchema = z.strictObject({
  /** @defaultValue 1.0 (OneDayAgent §3.1.2) */
  temperature: z.number().min(0).max(2).nullable().optional(),
  /** @defaultValue 0.95 (OneDayAgent §3.1.2) */
  topP: z.number().gt(0).max(1).nullable().optional(),
});

/** Sampling of one role, or of every role (`sampling`); `null` sends none. */
export interface SamplingOption {
  temperature?: number | null | undefined;
  topP?: number | null | undefined;
}

/** Every role that can have its own backend, sampling and prices. @internal */
export const ROLE_NAMES = [
  'plan',
  'execute',
  'synthesize',
  'verify',
  'repair',
  'summarize',
  'vision',
  'manage',
  'audit',
] as const satisfies readonly RoleName[];

/**
 * Prices of the run's calls, in `currency`: `inputPerMTok` / `outputPerMTok` (and `cachedInputPerMTok`,
 * `cacheWritePerMTok`) price the
 * calls of the main `backend` (over its own `pricing`); `roles` prices one role's calls, whatever backend makes them.
 */
const HarnessPricingSchema = z
  .strictObject({
    currency: CurrencySchema,
    inputPerMTok: PricingSchema.shape.inputPerMTok.optional(),
    outputPerMTok: PricingSchema.shape.outputPerMTok.optional(),
    cachedInputPerMTok: PricingSchema.shape.cachedInputPerMTok,
    cacheWritePerMTok: PricingSchema.shape.cacheWritePerMTok,
    roles: z.partialRecord(z.enum(ROLE_NAMES), PricingSchema).default({}),
  })
  .refine(
    (p) =>
      (p.inputPerMTok === undefined) === (p.outputPerMTok === undefined) &&
      ((p.cachedInputPerMTok === undefined && p.cacheWritePerMTok === undefined) || p.inputPerMTok !== undefined),
    {
      error: 'give inputPerMTok and outputPerMTok together (and cachedInputPerMTok / cacheWritePerMTok only with them)',
    },
  );

/** The option schema of `createHarness`. */
export const HarnessOptionsSchema = z.strictObject({
  backend,
  tools: z.union([z.array(tool), z.instanceof(ToolRegistry)]).default([]),
  /**
   * Where each run works (see docs/workspace.md): a directory (created when missing, never removed), a Workspace of
   * your own (never removed), or `{ dir?, keep? }`. Omitted, each run gets a fresh temporary directory, kept after
   * the run (`result.workspace`) and removed by `harness.close()` if the run succeeded; `keep: true` keeps them all,
   * `keep: false` removes them all. One run at a time per directory: a second gets `workspace-busy`.
   */
  workspace: workspace.optional(),
  /**
   * Called with the error and the event when an event listener throws; the run goes on either way.
   * @defaultValue logs to `console.error`
   */
  onListenerError: z
    .custom<(error: unknown, event: HarnessEvent) => void>(isFn, 'must be a function (error, event) => void')
    .optional(),
  /**
   * `'pipeline'`: the OneDayAgent pipeline (plan → execute → synthesize → verify → repair). `'managed'`: the
   * LongHorizon-Harness Manage-Execute-Audit loop over an audited task state (see docs/managed.md).
   * @defaultValue 'pipeline'
   */
  mode: z.enum(['pipeline', 'managed']).default('pipeline'),
  /** Options of managed mode (`mode: 'managed'`); see docs/managed.md. */
  managed: ManagedOptionsSchema.prefault({}),
  /** @defaultValue true */
  decomposition: z.boolean().default(true),
  /** @defaultValue true */
  verification: z.boolean().default(true),
  limits: LimitsSchema.prefault({}),
  /**
   * Sampling of every request: the paper's temperature 1.0 and top-p 0.95 unless set; `roles` overrides per role
   * (e.g. `{ roles: { verify: { temperature: 0 } } }`). Adapters drop what a model rejects (see docs/backends.md).
   */
  sampling: SamplingSchema.extend({
    roles: z.partialRecord(z.enum(ROLE_NAMES), SamplingSchema).default({}),
  }).prefault({}),
  memory: z.custom<MemoryManagerOptions>((v) => typeof v === 'object' && v !== null, 'must be an object').optional(),
  roles: z.partialRecord(z.enum(ROLE_NAMES), backend).default({}),
  /**
   * What the model calls cost, for the report's `cost` and `limits.maxCost` (see docs/backends.md, "Pricing and
   * cost"). A backend's own `pricing` prices its calls when this gives none for them.
   */
  pricing: HarnessPricingSchema.optional(),
  components: z
    .strictObject({
      planner: z.custom<PlannerLike>(hasMethod('plan'), 'must have plan(input)').optional(),
      executor: z.custom<ExecutorLike>(hasMethod('run'), 'must have run(input)').optional(),
      synthesizer: z.custom<SynthesizerLike>(hasMethod('synthesize'), 'must have synthesize(input)').optional(),
      verifier: z.custom<VerifierLike>(hasMethod('verify'), 'must have verify(input)').optional(),
      repairer: z.custom<RepairerLike>(hasMethod('repair'), 'must have repair(input)').optional(),
      memory: z.custom<ExecutionMemory>(isExecutionMemory, `must implement ${EXECUTION_MEMORY_SHAPE}`).optional(),
    })
    .prefault({}),
  prompts: z
    .strictObject({
      plan: z.string().min(1).optional(),
      execute: z.string().min(1).optional(),
      synthesize: z.string().min(1).optional(),
      verify: z.string().min(1).optional(),
      repair: z.string().min(1).optional(),
    })
    .prefault({}),
  /**
   * The application's instructions: a string for every role, or per role. Each is appended, under a heading of its
   * own, to the prompt of the role it names (the built-in one from `DEFAULT_PROMPTS`, or the `prompts` /
   * `managed.prompts` override), never replacing it: `plan` and `verify` to their system prompts, `execute` to the
   * built-in executor loop's system prompt (subtasks; managed mode's executor), `synthesize` and `repair` to their
   * objectives, `manage` and `audit` to managed mode's manager and auditor (an external auditor's prompt too).
   * Replaced `components` get none. @defaultValue none
   */
  instructions: z
    .union([
      z.string().trim().min(1),
      z.strictObject(
        Object.fromEntries(INSTRUCTED_ROLES.map((role) => [role, z.string().trim().min(1).optional()])) as Record<
          InstructedRole,
          z.ZodOptional<z.ZodString>
        >,
      ),
    ])
    .optional()
    .transform(
      (value): RoleInstructions =>
        typeof value === 'string' ? Object.fromEntries(INSTRUCTED_ROLES.map((role) => [role, value])) : (value ?? {}),
    ),
  /**
   * Where each run saves its snapshots, for `harness.resume()` (see docs/durability.md): a {@link RunStore}, or
   * `false` for none (a crashed run then cannot be resumed). @defaultValue a file store in each run's workspace
   * (`.harness/run.json`)
   */
  store: z
    .union([z.literal(false), z.custom<RunStore>(isRunStore)], {
      error: 'must be a RunStore (an object with save, load, list and delete) or false',
    })
    .optional(),
  /**
   * How much of a run waits for its snapshots to be stored (see docs/durability.md). `'async'`: saves go on behind
   * the run (the newest replacing any not yet written), except that a call of a tool that is not read-only runs only
   * once the snapshot journaling it is stored, and the finished run's result is stored before `run()` returns; after a
   * crash, a resume re-does the model calls and read-only tool calls made since the last stored snapshot. `'sync'`:
   * the run waits for every snapshot, so a resume re-does at most one model call and one tool call per executor loop,
   * at the price of a durable write (with fsync, for the file store) per save. Managed mode always works as with
   * `'sync'`. @defaultValue 'async'
   */
  durability: z.enum(['sync', 'async']).default('async'),
  /**
   * How long one operation of the store (a snapshot save, a load at resume) may take, in milliseconds. One that has
   * not settled by then counts as failed: the run ends with `store-failed` (its last good snapshot stays), and
   * `resume()` rejects with it. Every store operation also ends when the run stops (abort, `harness.close()`,
   * `limits.timeoutMs`), so a store that stops answering never holds a run past its limits (see docs/durability.md).
   * @defaultValue `DEFAULTS.storeTimeoutMs` (30 000)
   */
  storeTimeoutMs: duration(DEFAULTS.storeTimeoutMs),
  /**
   * The secret each run's snapshot key is derived from: at least 32 bytes (a string counts its UTF-8 bytes), kept where
   * the runs' agents cannot read it, and the same in every process that resumes the runs (see docs/durability.md,
   * "Tamper-evident snapshots"). Never saved and not part of the options fingerprint. @defaultValue the store's own
   * secret (Redis, `FileRunStore({ dir })`), else a per-user key file
   */
  snapshotKey: z
    .union([z.string(), z.instanceof(Uint8Array)])
    .refine((key) => Buffer.byteLength(key) >= 32, 'must be at least 32 bytes (e.g. 64 hex digits from a secret store)')
    .optional(),
  /**
   * The run's event log (see docs/events.md, "The event log"): by default every event of each run but the streaming
   * deltas is appended to `.harness/events.jsonl` in its workspace, one JSON line an event as the CLI's `--json`
   * prints it, redacted. `{ deltas: true }` keeps the deltas too; `{ write(event) }` hands the events to your own sink
   * instead of the file; `false` keeps no log. @defaultValue `{}` (the file, without deltas)
   */
  eventLog: z
    .union(
      [
        z.literal(false),
        z.strictObject({
          deltas: z.boolean().optional(),
          write: z.custom<(event: HarnessEvent) => void | Promise<void>>(isFn, 'must be a function').optional(),
        }),
      ],
      { error: 'must be false or { deltas?: boolean, write?: (event) => void | Promise<void> }' },
    )
    .optional(),
  now: z.custom<() => number>(isFn, 'must be a function returning milliseconds').optional(),
  generateId: z.custom<() => string>(isFn, 'must be a function returning a string').optional(),
});

/** What users pass to `createHarness`. */
export type HarnessOptions = z.input<typeof HarnessOptionsSchema>;
/** The options after defaults. @internal */
export type ResolvedHarnessOptions = z.output<typeof HarnessOptionsSchema>;
/** A role that can have its own backend through `roles`. */
export type RoleName = Purpose;

/** Validates `createHarness` options; a bad one throws `invalid-options` naming it and what is allowed. @internal */
export function parseHarnessOptions(options: HarnessOptions): ResolvedHarnessOptions {
  const parsed = HarnessOptionsSchema.safeParse(options);
  if (parsed.success) {
    checkCostOptions(parsed.data);
    return parsed.data;
  }
  const problems = describeIssues(parsed.error.issues, { schema: HarnessOptionsSchema });
  // The range hint helps only with a bad limit; a misspelt key carries its own suggestion.
  const limitsHint = parsed.error.issues.some(
    (issue) => issue.path[0] === 'limits' && issue.code !== 'unrecognized_keys',
  )
    ? " Limits are integers ≥ 1 (repairAttempts ≥ 0; maxCost any number > 0; costLimit 'hard' or 'soft')."
    : '';
  throw new HarnessError(
    'invalid-options',
    `Invalid createHarness options: ${problems.join('; ')}.${limitsHint} See ${docsUrl('pipeline.md')}.`,
  );
}
