/**
 * Which manager, auditor, executor and final verifier a managed run uses: the built-in ones wired to the run's
 * backends, sampling, memory and each role's tools, or the host's replacements.
 * @module
 */
import type { LlmBackend, Purpose } from '../../backend/types.js';
import type { EmitEvent } from '../../events.js';
import { Executor } from '../../executor/executor.js';
import type { ExecutorLike } from '../../contracts/executor.js';
import type { VerifierLike } from '../../contracts/roles.js';
import type { Sampling } from '../../llm/call-model.js';
import { singleShotHooks } from '../../memory/single-shot.js';
import type { ExecutionMemory } from '../../memory/types.js';
import { ToolRegistry } from '../../tools/registry.js';
import type { Tool } from '../../tools/types.js';
import { Verifier } from '../../verifier/verifier.js';
import type { Workspace } from '../../workspace/types.js';
import { isHarnessAgent } from './adapters.js';
import type { AgentAdapter } from '../../contracts/agent-adapter.js';
import { defaultAuditorTools, type AuditorToolSet } from './audit-tools.js';
import { Auditor } from './auditor.js';
import type { ExecutionDeps } from './execution.js';
import { Manager } from './manager.js';
import { MANAGED_DEFAULTS, type ResolvedManagedOptions } from '../shared/managed-options.js';
import type { AuditorLike, ManagerLike } from '../../contracts/managed.js';
import type { RoleInstructions } from '../../prompts/instructions.js';

/** What the wiring needs from the run. */
export interface WiringContext {
  runId: string;
  workspace: Workspace;
  emit: EmitEvent;
  now: () => number;
  /** The run's signal: aborted when the run stops. */
  signal: AbortSignal;
  backendFor: (role: Purpose) => LlmBackend;
  samplingFor: (role: Purpose) => Sampling | undefined;
  maxOutputTokens: number;
  memory: ExecutionMemory;
  registry: ToolRegistry;
  /** The app's run context (`run({ context })`), handed to every tool call as `ToolContext.context`; never saved. */
  context?: unknown;
  limits: { maxIterations: number; timeoutMs: number; toolTimeoutMs: number };
  /** Makes the final check's verifier with the run's emit; absent: a `Verifier` on the `verify` role's backend. */
  verifier?: ((emit: EmitEvent) => VerifierLike) | undefined;
  /** The application's instructions for the manager, the auditor and the built-in executor. */
  instructions: RoleInstructions;
}

/** The roles of one managed run. */
export interface ManagedRoles {
  manager: ManagerLike;
  auditor: AuditorLike;
  execution: ExecutionDeps;
  /** The final check's verifier (made on first use). */
  verifier: () => VerifierLike;
  /** Whether the executor is the built-in loop (given the run's time left, so its timeout is the run's). */
  builtinExecutor: boolean;
  /** Whether the built-in auditor can run commands; undefined for an external or replaced auditor. */
  auditorRunsCommands: boolean | undefined;
  /** What the user should know about the roles' tools, for `run-start`. */
  warnings: string[];
}

/** Wires the roles of one run from its options. */
export function wireRoles(o: ResolvedManagedOptions, run: WiringContext): ManagedRoles {
  const builtinExecutor = builtin(o.agents.executor);
  const builtinAuditor = !o.components.auditor && builtin(o.agents.auditor);
  const executorTools = o.executorTools
    ? new ToolRegistry(o.executorTools, { toolTimeoutMs: run.limits.toolTimeoutMs })
    : run.registry;
  const auditorTools: AuditorToolSet | undefined = builtinAuditor
    ? o.auditorTools
      ? { tools: [...o.auditorTools], warnings: [] }
      : defaultAuditorTools(run.registry.list())
    : undefined;
  const auditor = o.components.auditor ?? builtInAuditor(o, run, auditorTools?.tools ?? []);
  let executor: ExecutorLike | undefined;
  let verifier: VerifierLike | undefined;
  return {
    manager: o.components.manager ?? manager(o, run),
    auditor,
    execution: {
      agent: builtinExecutor ? undefined : o.agents.executor,
      executor: () =>
        (executor ??= new Executor({
          backend: run.backendFor('execute'),
          tools: executorTools,
          memory: run.memory,
          emit: run.emit,
          backendFor: run.backendFor,
          samplingFor: run.samplingFor,
          maxOutputTokens: run.maxOutputTokens,
          limits: run.limits,
          now: run.now,
          ...(run.instructions.execute ? { instructions: run.instructions.execute } : {}),
          context: run.context,
        })),
      memory: run.memory,
      emit: run.emit,
      backendFor: run.backendFor,
      evidenceShown: MANAGED_DEFAULTS.evidenceShown,
    },
    verifier: () => (verifier ??= run.verifier?.(run.emit) ?? builtInVerifier(run)),
    builtinExecutor,
    auditorRunsCommands: builtinAuditor && auditor instanceof Auditor ? auditor.commands !== 'none' : undefined,
    warnings: toolWarnings([...(builtinExecutor ? executorTools.list() : []), ...(auditorTools?.tools ?? [])]).concat(
      auditorTools?.warnings ?? [],
      agentWarnings([o.agents.executor, o.components.auditor ? undefined : o.agents.auditor]),
    ),
  };
}

function builtInAuditor(o: ResolvedManagedOptions, run: WiringContext, tools: readonly Tool[]): Auditor {
  return new Auditor({
    ...(builtin(o.agents.auditor) ? {} : { agent: o.agents.auditor }),
    backend: run.backendFor('audit'),
    // Each must be read-only; the Auditor adds read_file and list_files when missing.
    tools,
    memory: run.memory,
    emit: run.emit,
    backendFor: run.backendFor,
    samplingFor: run.samplingFor,
    maxOutputTokens: run.maxOutputTokens,
    now: run.now,
    context: run.context,
    ...(o.prompts.audit ? { prompt: o.prompts.audit } : {}),
    ...(run.instructions.audit ? { instructions: run.instructions.audit } : {}),
    limits: {
      maxIterations: o.auditorIterations,
      timeoutMs: run.limits.timeoutMs,
      toolTimeoutMs: run.limits.toolTimeoutMs,
    },
  });
}

/** The built-in manager: its calls fitted into the window by the run's memory, with the `manage` role's settings. */
function manager(o: ResolvedManagedOptions, run: WiringContext): Manager {
  return new Manager({
    ...singleShot(run, 'manage'),
    ...(o.prompts.manage ? { prompt: o.prompts.manage } : {}),
    ...(run.instructions.manage ? { instructions: run.instructions.manage } : {}),
  });
}

/** A `Verifier` on the `verify` role's backend, for a run whose host passes none. */
function builtInVerifier(run: WiringContext): Verifier {
  return new Verifier(singleShot(run, 'verify'));
}

function singleShot(run: WiringContext, role: 'manage' | 'verify') {
  return singleShotHooks(
    { ...run, summarizer: run.backendFor('summarize'), summarizerSampling: run.samplingFor('summarize') },
    { backend: run.backendFor(role), sampling: run.samplingFor(role), maxOutputTokens: run.maxOutputTokens },
  );
}

/** Each tool's warnings, once, as `name: warning`. */
function toolWarnings(tools: readonly Tool[]): string[] {
  const warnings = tools.flatMap((tool) => (tool.warnings ?? []).map((w) => `${tool.name}: ${w}`));
  return [...new Set(warnings)];
}

/** The external agents' warnings, once each. */
function agentWarnings(agents: ReadonlyArray<AgentAdapter | undefined>): string[] {
  return [...new Set(agents.flatMap((agent) => (agent && !builtin(agent) ? [...(agent.warnings ?? [])] : [])))];
}

function builtin(agent: AgentAdapter | undefined): boolean {
  return agent === undefined || isHarnessAgent(agent);
}
