/**
 * Which backend, sampling and component each role of a run uses: the defaults wired from the options, or the
 * replacements the host passed in `components`.
 * @module
 */
import type { LlmBackend, Purpose } from '../../backend/types.js';
import { DEFAULTS } from '../../defaults.js';
import type { EmitEvent } from '../../events.js';
import { Executor } from '../../executor/executor.js';
import type { ExecutorLike } from '../../contracts/executor.js';
import { reservedOutputTokens, type ModelCallContext, type Sampling } from '../../llm/call-model.js';
import { singleShotHooks, type SingleShotHooks } from '../../memory/single-shot.js';
import type { ExecutionMemory } from '../../memory/types.js';
import type { PlannerLike, RepairerLike, SynthesizerLike, VerifierLike } from '../../contracts/roles.js';
import { Planner } from '../../planner/planner.js';
import { Repairer } from '../../repairer/repairer.js';
import { Synthesizer } from '../../synthesizer/synthesizer.js';
import { TYPED_OUTPUT_SCOPE } from '../../synthesizer/typed-output.js';
import type { ToolRegistry } from '../../tools/registry.js';
import { Verifier } from '../../verifier/verifier.js';
import type { Workspace } from '../../workspace/types.js';
import { RunCosts } from './cost.js';
import type { ResolvedHarnessOptions, SamplingOption } from './options.js';
import { backendOfRole } from './role-backends.js';
import type { RunControl } from './run-control.js';

/** What the wiring of one run needs from the run. */
export interface RunContext {
  runId: string;
  workspace: Workspace;
  registry: ToolRegistry;
  memory: ExecutionMemory;
  emit: EmitEvent;
  now: () => number;
  signal: AbortSignal;
  /** The run's stop control: `limits.maxCost` stops the run through it. */
  control: RunControl;
  /** The run's cost so far, read from its report tally (which a resumed run restores). */
  costSoFar: () => number;
  /** Adds the run's hooks (checkpoints, resume) to every executor loop; absent: executors as built. */
  wrapExecutor?: ((executor: ExecutorLike) => ExecutorLike) | undefined;
  /** The app's run context (`run({ context })`), handed to every tool call as `ToolContext.context`; never saved. */
  context?: unknown;
}

/** The roles of one run, built once each. */
export class RoleWiring {
  private readonly executors = new Map<Purpose, ExecutorLike>();
  private readonly costs: RunCosts | undefined;

  constructor(
    private readonly o: ResolvedHarnessOptions,
    private readonly run: RunContext,
  ) {
    if (RunCosts.needed(o)) this.costs = new RunCosts(o, run);
  }

  /**
   * The backend of a role: `roles[role]`, else the main backend. Verification falls back to `roles.vision` before the
   * main backend, because it is sent the delivered images. With `pricing` or `limits.maxCost`, the run's view of it:
   * charged at the role's prices, its calls admitted by the run's cost limit.
   */
  backendFor = (role: Purpose): LlmBackend => this.costs?.backendFor(role) ?? backendOfRole(this.o, role);

  /** The sampling of a role: its `sampling.roles` entry, else the global `sampling`, else the paper's; `null` sends none. */
  samplingFor = (role: Purpose): Sampling | undefined => {
    const global = this.o.sampling;
    const own: SamplingOption = (global.roles as Partial<Record<Purpose, SamplingOption>>)[role] ?? {};
    const pick = (key: 'temperature' | 'topP'): number | undefined => {
      const value = own[key] !== undefined ? own[key] : global[key] !== undefined ? global[key] : DEFAULTS[key];
      return value ?? undefined;
    };
    const temperature = pick('temperature');
    const topP = pick('topP');
    if (temperature === undefined && topP === undefined) return undefined;
    return { ...(temperature === undefined ? {} : { temperature }), ...(topP === undefined ? {} : { topP }) };
  };

  /** Output tokens reserved for (and sent with) each call to `backend`: `limits.maxOutputTokens`, at most ¼ window. */
  maxOutputTokens(backend: LlmBackend): number {
    return reservedOutputTokens(backend.contextWindow, this.o.limits.maxOutputTokens);
  }

  planner(): PlannerLike {
    const facts = {
      tools: this.run.registry.list().map((tool) => tool.name),
      parallel: this.o.limits.maxParallelSubtasks > 1,
    };
    return (
      this.o.components.planner ??
      new Planner({
        ...this.singleShot('plan'),
        facts,
        ...optional('prompt', this.o.prompts.plan),
        ...optional('instructions', this.o.instructions.plan),
      })
    );
  }

  /** The verifier; `emit` replaces the run's for its calls (a managed run folds its report from its own emit). */
  verifier(emit?: EmitEvent): VerifierLike {
    return (
      this.o.components.verifier ??
      new Verifier({
        ...this.singleShot('verify', emit),
        ...optional('prompt', this.o.prompts.verify),
        ...optional('instructions', this.o.instructions.verify),
      })
    );
  }

  /**
   * How the typed result of `run({ output })` is asked for: a single-shot call of the `synthesize` role (its backend,
   * sampling, prices and cost limit), fitted into its window, observed under scope `output`.
   */
  typedOutputCall(): ModelCallContext {
    const hooks = this.singleShot('synthesize');
    return {
      ...hooks.call,
      backend: hooks.backend,
      purpose: 'synthesize',
      runId: this.run.runId,
      scope: TYPED_OUTPUT_SCOPE,
      emit: hooks.emit,
      countTokens: hooks.countTokens,
      fit: hooks.fit,
      now: hooks.now,
      signal: this.run.signal,
    };
  }

  /** What a single-shot role (plan, verify, the typed result) is built with: its backend and the run's hooks for its calls. */
  private singleShot(role: 'plan' | 'verify' | 'synthesize', emit = this.run.emit): SingleShotHooks {
    return singleShotHooks(
      {
        ...this.run,
        emit,
        summarizer: this.backendFor('summarize'),
        summarizerSampling: this.samplingFor('summarize'),
      },
      {
        backend: this.backendFor(role),
        sampling: this.samplingFor(role),
        maxOutputTokens: this.o.limits.maxOutputTokens,
      },
    );
  }

  synthesizer(): SynthesizerLike {
    return (
      this.o.components.synthesizer ??
      new Synthesizer({
        executor: this.executorFor('synthesize'),
        ...optional('prompt', this.o.prompts.synthesize),
        ...optional('instructions', this.o.instructions.synthesize),
      })
    );
  }

  repairer(): RepairerLike {
    return (
      this.o.components.repairer ??
      new Repairer({
        executor: this.executorFor('repair'),
        ...optional('prompt', this.o.prompts.repair),
        ...optional('instructions', this.o.instructions.repair),
      })
    );
  }

  executorFor(purpose: 'execute' | 'synthesize' | 'repair'): ExecutorLike {
    const executor = this.builtExecutorFor(purpose);
    return this.run.wrapExecutor ? this.run.wrapExecutor(executor) : executor;
  }

  private builtExecutorFor(purpose: 'execute' | 'synthesize' | 'repair'): ExecutorLike {
    const custom = this.o.components.executor;
    if (custom) return custom;
    let executor = this.executors.get(purpose);
    if (!executor) {
      const backend = this.backendFor(purpose);
      executor = new Executor({
        backend,
        tools: this.run.registry,
        memory: this.run.memory,
        emit: this.run.emit,
        backendFor: this.backendFor,
        samplingFor: this.samplingFor,
        maxOutputTokens: this.o.limits.maxOutputTokens,
        limits: {
          maxIterations: this.o.limits.maxIterations,
          timeoutMs: this.o.limits.timeoutMs,
          toolTimeoutMs: this.o.limits.toolTimeoutMs,
        },
        now: this.run.now,
        context: this.run.context,
        ...optional('systemPrompt', this.o.prompts.execute),
        // Synthesis and repair loops carry their role's instructions in their objectives, not the executor's.
        ...optional('instructions', purpose === 'execute' ? this.o.instructions.execute : undefined),
      });
      this.executors.set(purpose, executor);
    }
    return executor;
  }
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
