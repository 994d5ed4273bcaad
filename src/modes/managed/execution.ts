/**
 * The executor's part of a round: one episode of the built-in `Executor` or of an external agent in a fresh context,
 * reduced to an unverified claim. The trace is not kept: the loop discards its saved outputs once the round's
 * execution ends (see `traces.ts`).
 * @module
 */
import type { LlmBackend, Purpose } from '../../backend/types.js';
import type { HarnessErrorCode } from '../../errors.js';
import { toHarnessError } from '../../errors.js';
import type { LoopCheckpoint } from '../../durability/types.js';
import type { EmitEvent } from '../../events.js';
import type { ExecutorLike, ExecutorResult } from '../../contracts/executor.js';
import type { ExecutionMemory } from '../../memory/types.js';
import type { Contract, TaskState } from '../../contracts/task-state.js';
import { DataMark } from '../../prompts/datamark.js';
import type { Workspace } from '../../workspace/types.js';
import type { AgentAdapter, EpisodeStatus } from '../../contracts/agent-adapter.js';
import { renderAuditedState, renderExecutorObjective, renderExternalExecutorPrompt } from './prompts.js';
import type { ExecutionClaim } from '../../contracts/managed.js';

/** One round's execution. */
export interface ExecutionInput {
  runId: string;
  round: number;
  request: string;
  attachments: readonly string[];
  contract: Contract;
  /** The audited state: all an executor learns of earlier rounds. */
  state: TaskState;
  workspace: Workspace;
  signal: AbortSignal;
  /** Iterations of the built-in loop. */
  maxIterations: number;
  timeoutMs: number;
  /** The run's boundary of untrusted text in prompts; absent: a fresh one for this round. */
  dataMark?: DataMark;
  /** The built-in loop goes on from this checkpoint of the round's loop instead of starting afresh. */
  resumeFrom?: LoopCheckpoint | undefined;
  /** Awaited with the built-in loop's state after every model response and around every tool call. */
  onCheckpoint?: ((checkpoint: LoopCheckpoint) => Promise<void>) | undefined;
  /** Awaited just before an external agent's episode starts (a resumed run must not start it twice). */
  onEpisodeStart?: (() => Promise<void>) | undefined;
}

/** The claim, and what the episode cost. */
export interface ExecutionOutcome {
  claim: ExecutionClaim;
  /** ReAct iterations used (0 for external agents). */
  iterations: number;
  error?: { code: HarnessErrorCode; message: string };
}

/** What an execution needs from the run. */
export interface ExecutionDeps {
  /** An external agent; undefined runs the built-in executor. */
  agent: AgentAdapter | undefined;
  /** The built-in executor (made on first use). */
  executor: () => ExecutorLike;
  /**
   * Bounds the claim before it reaches a prompt (head and tail; the full text is saved as
   * `.harness/outputs/claim-N.txt`, apart from the executor's own outputs, for the round's audit only).
   */
  memory: ExecutionMemory;
  emit: EmitEvent;
  backendFor: (role: Purpose) => LlmBackend;
  evidenceShown: number;
}

const FROM_LOOP: Record<ExecutorResult['status'], EpisodeStatus> = {
  completed: 'done',
  failed: 'error',
  aborted: 'cancelled',
  timeout: 'timeout',
};

/** Runs a round's contract and returns the executor's claim, bounded by the memory layer. */
export async function executeContract(deps: ExecutionDeps, input: ExecutionInput): Promise<ExecutionOutcome> {
  const scope = `execute-${input.round}`;
  const mark = input.dataMark ?? DataMark.random();
  if (!deps.agent) {
    const result = await deps.executor().run({
      runId: input.runId,
      purpose: 'execute',
      scope,
      request: input.request,
      objective: renderExecutorObjective(input.contract, input.state, input.round, mark),
      priorState: renderAuditedState(input.state, deps.evidenceShown, mark),
      workspace: input.workspace,
      signal: input.signal,
      maxIterations: input.maxIterations,
      timeoutMs: input.timeoutMs,
      dataMark: mark,
      ...(input.resumeFrom ? { resumeFrom: input.resumeFrom } : {}),
      // Managed mode stores every step before going on: its task state moves only on what is recorded.
      ...(input.onCheckpoint ? { onCheckpoint: input.onCheckpoint, durability: 'sync' as const } : {}),
    });
    const status = FROM_LOOP[result.status];
    const claim: ExecutionClaim = {
      agent: 'harness',
      status,
      summary: await bound(deps, input, 'harness', result.answer, status),
      files: result.files,
      ...(result.error ? { error: result.error.message } : {}),
    };
    return { claim, iterations: result.iterations, ...(result.error ? { error: result.error } : {}) };
  }
  const agent = deps.agent;
  const prompt = renderExternalExecutorPrompt({
    request: input.request,
    attachments: input.attachments,
    contract: input.contract,
    state: input.state,
    round: input.round,
    evidenceShown: deps.evidenceShown,
    mark,
  });
  let episode: { status: EpisodeStatus; output: string; exitCode?: number };
  let error: ExecutionOutcome['error'];
  await input.onEpisodeStart?.();
  try {
    episode = await agent.runEpisode({
      prompt,
      cwd: input.workspace.root,
      timeoutMs: input.timeoutMs,
      signal: input.signal,
      env: { HARNESS_RUN_ID: input.runId, HARNESS_ROUND: String(input.round), HARNESS_ROLE: 'execute' },
    });
  } catch (thrown) {
    const { code, message } = toHarnessError(thrown);
    error = { code, message };
    episode = { status: input.signal.aborted ? 'cancelled' : 'error', output: '' };
  }
  const claim: ExecutionClaim = {
    agent: agent.name,
    status: episode.status,
    ...(episode.exitCode === undefined ? {} : { exitCode: episode.exitCode }),
    summary: await bound(deps, input, agent.name, episode.output, episode.status),
    files: [],
    ...(error ? { error: error.message } : {}),
  };
  return { claim, iterations: 0, ...(error ? { error } : {}) };
}

/** The message of an external agent's episode that a stop cut off: what it did is for the audit to find out. */
export const INTERRUPTED_EPISODE =
  'interrupted: the harness stopped while this episode ran (crash or restart); its outcome is unknown. It was not ' +
  'started again.';

/**
 * The outcome of an external agent's episode that was started before the run stopped and is not started again on
 * resume: an `error` claim saying so, which the round's audit then checks against the workspace.
 */
export function interruptedEpisode(agent: string): ExecutionOutcome {
  return {
    claim: { agent, status: 'error', summary: INTERRUPTED_EPISODE, files: [], error: INTERRUPTED_EPISODE },
    iterations: 0,
  };
}

/**
 * The claim as prompts carry it: the memory layer keeps head and tail and saves the whole in its own log
 * (`.harness/outputs/claim-N.txt`), so that the round's audit can read it without finding the executor's tool outputs.
 */
function bound(
  deps: ExecutionDeps,
  input: ExecutionInput,
  agent: string,
  text: string,
  status: EpisodeStatus,
): Promise<string> {
  return deps.memory.boundObservation(
    {
      callId: `claim-${input.round}`,
      toolName: agent,
      text,
      files: [],
      images: [],
      isError: status !== 'done',
      observation: 'text',
      durationMs: 0,
    },
    {
      runId: input.runId,
      purpose: 'execute',
      scope: claimScope(input.round),
      backend: deps.backendFor('execute'),
      summarizer: deps.backendFor('summarize'),
      workspace: input.workspace,
      signal: input.signal,
      emit: deps.emit,
    },
  );
}

/** The memory scope of round `round`'s claim: its saved full text is `.harness/outputs/claim-<round>.txt`. */
export function claimScope(round: number): string {
  return `claim-${round}`;
}
