/**
 * What a loop starts from: the settings every loop of one Executor shares, and the dialogue of a loop that starts
 * afresh, with the system prompt made of what the run's tools report.
 * @module
 */
import type { LlmBackend, Purpose } from '../backend/types.js';
import type { ExecutorRunInput } from '../contracts/executor.js';
import type { EmitEvent } from '../events.js';
import type { Sampling } from '../llm/call-model.js';
import type { ExecutionMemory } from '../memory/types.js';
import type { DataMark } from '../prompts/datamark.js';
import { executorSystemPrompt, renderExecutorTask } from '../prompts/executor.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { LoopProgress } from './loop-journal.js';
import { withInstructions } from '../prompts/instructions.js';

/** What every loop of one Executor shares. */
export interface LoopSettings {
  tools: ToolRegistry;
  memory: ExecutionMemory;
  emit: EmitEvent | undefined;
  backendFor: (role: Purpose | 'vision') => LlmBackend;
  /** The host's system prompt; absent: {@link executorSystemPrompt} of what the tools report. */
  systemPrompt: string | undefined;
  /** The application's instructions, appended to the system prompt. */
  instructions: string | undefined;
  limits: LoopLimits;
  now: () => number;
  /** Sampling of a role's calls; undefined sends none. */
  samplingFor: (role: Purpose) => Sampling | undefined;
  /** Output tokens reserved for (and sent with) every call, at most a quarter of the called backend's window. */
  maxOutputTokens: number;
  /** The run's app context for the tools (`ToolContext.context`). */
  context: unknown;
}

/** The loop limits after defaults. */
export interface LoopLimits {
  maxIterations: number;
  timeoutMs: number;
  toolTimeoutMs?: number | undefined;
  maxRepeatedInvalidCalls: number;
}

/** The progress of a loop that starts afresh: the system prompt (marked with the run's boundary) and the task. */
export function freshProgress(settings: LoopSettings, input: ExecutorRunInput, mark: DataMark): LoopProgress {
  const { request, objective, priorState } = input;
  return {
    iterations: 0,
    dialogue: [
      {
        role: 'system',
        content: mark.withRule(
          withInstructions(settings.systemPrompt ?? defaultSystemPrompt(settings.tools), settings.instructions),
        ),
      },
      { role: 'user', content: renderExecutorTask({ request, objective, priorState }) },
    ],
    usage: { inputTokens: 0, outputTokens: 0 },
    peakRequestTokens: 0,
    lastText: '',
    cutOff: '',
    toolFiles: [],
    invalid: { key: null, count: 0 },
  };
}

/**
 * The system prompt made of facts about `tools` when the loop starts: which tools run programs in a sandbox (as each
 * reports it in `Tool.sandbox`), and which run them on the host.
 */
function defaultSystemPrompt(tools: ToolRegistry): string {
  const running = tools.list().filter((tool) => typeof tool.sandbox?.active === 'boolean');
  return executorSystemPrompt({
    sandboxed: running.filter((tool) => tool.sandbox?.active).map((tool) => tool.name),
    unsandboxed: running.filter((tool) => !tool.sandbox?.active).map((tool) => tool.name),
  });
}
