/**
 * Which manager, auditor and executor a managed run uses: the built-in ones wired to the run's backends, sampling,
 * memory and tools, or the host's replacements.
 * @module
 */
import type { LlmBackend, Purpose } from '../../backend/types.js';
import type { EmitEvent } from '../../events.js';
import { Executor } from '../../executor/executor.js';
import type { ExecutorLike } from '../../contracts/executor.js';
import type { Sampling } from '../../llm/call-model.js';
import { singleShotHooks } from '../../memory/single-shot.js';
import type { ExecutionMemory } from '../../memory/types.js';
import { readOnlyTools } from '../../tools/builtin/index.js';
import type { ToolRegistry } from '../../tools/registry.js';
import type { Workspace } from '../../workspace/types.js';
import { isHarnessAgent } from './adapters.js';
import type { AgentAdapter } from '../../contracts/agent-adapter.js';
import { Auditor } from './auditor.js';
import type { ExecutionDeps } from './execution.js';
import { Manager } from './manager.js';
import { MANAGED_DEFAULTS, type ResolvedManagedOptions } from '../shared/managed-options.js';
import type { AuditorLike, ManagerLike } from '../../contracts/managed.js';

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
  limits: { maxIterations: number; timeoutMs: number; toolTimeoutMs: number };
}

/** The roles of one managed run. */
export interface ManagedRoles {
  manager: ManagerLike;
  auditor: AuditorLike;
  execution: ExecutionDeps;
  /** Whether the executor's episodes spend the run's ReAct iterations (the built-in loop does, external agents do not). */
  executorUsesIterations: boolean;
  /** Whether audits spend them (the built-in loop, and any replacement auditor that reports iterations). */
  auditorUsesIterations: boolean;
}

/** Wires the roles of one run from its options. */
export function wireRoles(o: ResolvedManagedOptions, run: WiringContext): ManagedRoles {
  const builtinExecutor = builtin(o.agents.executor);
  let executor: ExecutorLike | undefined;
  return {
    manager: o.components.manager ?? manager(o, run),
    auditor:
      o.components.auditor ??
      new Auditor({
        ...(builtin(o.agents.auditor) ? {} : { agent: o.agents.auditor }),
        backend: run.backendFor('audit'),
        // The host's tools that never change anything; the Auditor adds read_file and list_files when missing.
        tools: readOnlyTools(run.registry.list()),
        memory: run.memory,
        emit: run.emit,
        backendFor: run.backendFor,
        samplingFor: run.samplingFor,
        maxOutputTokens: run.maxOutputTokens,
        now: run.now,
        ...(o.prompts.audit ? { prompt: o.prompts.audit } : {}),
        limits: {
          maxIterations: o.auditorIterations,
          timeoutMs: run.limits.timeoutMs,
          toolTimeoutMs: run.limits.toolTimeoutMs,
        },
      }),
    execution: {
      agent: builtinExecutor ? undefined : o.agents.executor,
      executor: () =>
        (executor ??= new Executor({
          backend: run.backendFor('execute'),
          tools: run.registry,
          memory: run.memory,
          emit: run.emit,
          backendFor: run.backendFor,
          samplingFor: run.samplingFor,
          maxOutputTokens: run.maxOutputTokens,
          limits: run.limits,
          now: run.now,
        })),
      memory: run.memory,
      emit: run.emit,
      backendFor: run.backendFor,
      evidenceShown: MANAGED_DEFAULTS.evidenceShown,
    },
    executorUsesIterations: builtinExecutor,
    auditorUsesIterations: o.components.auditor !== undefined || builtin(o.agents.auditor),
  };
}

/** The built-in manager: its calls fitted into the window by the run's memory, with the `manage` role's settings. */
function manager(o: ResolvedManagedOptions, run: WiringContext): Manager {
  const hooks = singleShotHooks(
    { ...run, summarizer: run.backendFor('summarize'), summarizerSampling: run.samplingFor('summarize') },
    { backend: run.backendFor('manage'), sampling: run.samplingFor('manage'), maxOutputTokens: run.maxOutputTokens },
  );
  return new Manager({ ...hooks, ...(o.prompts.manage ? { prompt: o.prompts.manage } : {}) });
}

function builtin(agent: AgentAdapter | undefined): boolean {
  return agent === undefined || isHarnessAgent(agent);
}
