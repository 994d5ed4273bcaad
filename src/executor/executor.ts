/**
 * The ReAct executor: validates its options once and runs each loop (see loop.ts) in a fresh dialogue.
 * @module
 */
import { z } from 'zod';
import type { LlmBackend, Purpose } from '../backend/types.js';
import { DEFAULTS } from '../defaults.js';
import { HarnessError } from '../errors.js';
import type { EmitEvent } from '../events.js';
import type { Sampling } from '../llm/call-model.js';
import { MemoryManager } from '../memory/memory-manager.js';
import { EXECUTION_MEMORY_SHAPE, isExecutionMemory, type ExecutionMemory } from '../memory/types.js';
import { EXECUTOR_SYSTEM_PROMPT } from '../prompts/executor.js';
import type { ToolRegistry } from '../tools/registry.js';
import { Loop } from './loop.js';
import type { LoopSettings } from './loop-start.js';
import type { ExecutorResult, ExecutorRunInput } from '../contracts/executor.js';

const MAX_TIMER_MS = 2_147_483_647;

const LimitsSchema = z
  .object({
    /** @defaultValue DEFAULTS.maxIterations (200) */
    maxIterations: z.number().int().positive().default(DEFAULTS.maxIterations),
    /** @defaultValue DEFAULTS.timeoutMs (7 200 000) */
    timeoutMs: z.number().int().positive().max(MAX_TIMER_MS).default(DEFAULTS.timeoutMs),
    /** Timeout of tools without their own; the registry's default applies when absent. */
    toolTimeoutMs: z.number().int().positive().max(MAX_TIMER_MS).optional(),
    /** @defaultValue DEFAULTS.maxRepeatedInvalidCalls (3) */
    maxRepeatedInvalidCalls: z.number().int().min(1).default(DEFAULTS.maxRepeatedInvalidCalls),
  })
  .prefault({});

const OptionsSchema = z.object({
  backend: z.custom<LlmBackend>((value) => isBackend(value), 'must be an LlmBackend (an object with generate())'),
  tools: z.custom<ToolRegistry>(
    (value) => typeof value === 'object' && value !== null && typeof (value as ToolRegistry).invoke === 'function',
    'must be a ToolRegistry',
  ),
  memory: z.custom<ExecutionMemory>(isExecutionMemory, `must implement ${EXECUTION_MEMORY_SHAPE}`).optional(),
  emit: z.custom<EmitEvent>((value) => typeof value === 'function', 'must be a function').optional(),
  backendFor: z
    .custom<(role: Purpose | 'vision') => LlmBackend>((value) => typeof value === 'function', 'must be a function')
    .optional(),
  systemPrompt: z.string().trim().min(1, 'must be a non-empty string').optional(),
  instructions: z.string().optional(),
  limits: LimitsSchema,
  now: z.custom<() => number>((value) => typeof value === 'function', 'must be a function').optional(),
  samplingFor: z
    .custom<(role: Purpose) => Sampling | undefined>((value) => typeof value === 'function', 'must be a function')
    .optional(),
  maxOutputTokens: z.number().int().positive().optional(),
  context: z.unknown().optional(),
});

/** Options of {@link Executor}. */
export interface ExecutorOptions {
  backend: LlmBackend;
  tools: ToolRegistry;
  /** Keeps every request inside the window. @defaultValue `new MemoryManager()` (the paper's defaults) */
  memory?: ExecutionMemory;
  /** Receives `llm-request`, `llm-response`, `tool-call` and `tool-result` events. */
  emit?: EmitEvent;
  /** The backend of a role; the loop calls `backendFor(purpose)`. @defaultValue `() => backend` */
  backendFor?: (role: Purpose | 'vision') => LlmBackend;
  /**
   * The loops' system prompt. Default: `executorSystemPrompt()` of what the tools report when each loop starts —
   * {@link EXECUTOR_SYSTEM_PROMPT}, plus whether the programs of each tool that runs any (`Tool.sandbox`) execute in a
   * sandbox.
   */
  systemPrompt?: string;
  /** The application's instructions, appended to the system prompt (the default one or `systemPrompt`). */
  instructions?: string;
  limits?: z.input<typeof LimitsSchema>;
  now?: () => number;
  /** Sampling (temperature, top-p) of a role's calls; the harness passes its `sampling` option. @defaultValue none sent */
  samplingFor?: (role: Purpose) => Sampling | undefined;
  /**
   * Output tokens reserved for, and sent with, every call; at most a quarter of the called backend's window.
   * @defaultValue DEFAULTS.maxOutputTokens (8 192)
   */
  maxOutputTokens?: number;
  /** The run's app context, handed to every tool call as `ToolContext.context` (never sent to a model). */
  context?: unknown;
}

const RunInputSchema = z.object({
  runId: z.string().min(1),
  purpose: z.enum(['execute', 'synthesize', 'repair']),
  scope: z.string().min(1),
  request: z.string(),
  objective: z.string(),
  priorState: z.string().optional(),
  maxIterations: z.number().int().min(0).optional(),
  timeoutMs: z.number().int().min(0).optional(),
});

/**
 * Runs one ReAct loop in a fresh dialogue: the model calls tools until it calls `submit_answer`
 * or replies with text only. Every request passes through the execution memory first; the loop is
 * bounded by iterations, a timeout and an `AbortSignal`, and never rejects for a model or tool failure.
 *
 * @example
 * ```ts
 * const executor = new Executor({ backend, tools: new ToolRegistry([add]) });
 * const result = await executor.run({
 *   runId: 'r1', purpose: 'execute', scope: 'subtask-1', workspace,
 *   request: 'What is 2 + 3?', objective: 'Compute 2 + 3 with the add tool.',
 * });
 * result.status; // 'completed'
 * ```
 */
export class Executor {
  private readonly settings: LoopSettings;

  constructor(options: ExecutorOptions) {
    const parsed = OptionsSchema.safeParse(options ?? {});
    if (!parsed.success) throw optionsError(parsed.error);
    const data = parsed.data;
    this.settings = {
      tools: data.tools,
      memory: data.memory ?? new MemoryManager(),
      emit: data.emit,
      backendFor: data.backendFor ?? (() => data.backend),
      systemPrompt: data.systemPrompt,
      instructions: data.instructions,
      limits: data.limits,
      now: data.now ?? Date.now,
      samplingFor: data.samplingFor ?? (() => undefined),
      maxOutputTokens: data.maxOutputTokens ?? DEFAULTS.maxOutputTokens,
      context: data.context,
    };
  }

  /** Runs one loop to its end; resolves with a result for every outcome (invalid input throws `invalid-input`). */
  async run(input: ExecutorRunInput): Promise<ExecutorResult> {
    const checked = RunInputSchema.safeParse(input ?? {});
    if (!checked.success) {
      const issue = checked.error.issues[0];
      throw new HarnessError(
        'invalid-input',
        `Invalid executor input "${issue?.path.join('.') ?? '?'}": ${issue?.message ?? 'invalid'}. ` +
          'runId and scope must be non-empty strings, purpose one of execute/synthesize/repair, ' +
          'maxIterations and timeoutMs non-negative integers.',
      );
    }
    if (typeof input.workspace?.root !== 'string') {
      throw new HarnessError(
        'invalid-input',
        'Invalid executor input "workspace": pass a Workspace (e.g. LocalWorkspace).',
      );
    }
    return new Loop(this.settings, input).run();
  }
}

function isBackend(value: unknown): value is LlmBackend {
  return typeof value === 'object' && value !== null && typeof (value as LlmBackend).generate === 'function';
}

function optionsError(error: z.ZodError): HarnessError {
  const issue = error.issues[0];
  const name = issue?.path.join('.') || 'options';
  const ranges: Record<string, string> = {
    'limits.maxIterations': 'a positive integer',
    'limits.timeoutMs': `a positive integer of milliseconds up to ${MAX_TIMER_MS}`,
    'limits.toolTimeoutMs': `a positive integer of milliseconds up to ${MAX_TIMER_MS}`,
    'limits.maxRepeatedInvalidCalls': 'an integer of at least 1',
  };
  const range = ranges[name];
  return new HarnessError(
    'invalid-options',
    `Invalid Executor option "${name}": ${issue?.message ?? 'invalid'}${range ? `; allowed: ${range}` : ''}.`,
  );
}
