/**
 * The hooks of a single-shot role (plan, verify, manage): its requests counted, fitted and sent through the run's
 * memory, with the role's sampling and the same output reserve in the fit and on the wire. One place for the pipeline
 * and managed mode.
 * @module
 */
import type { LlmBackend } from '../backend/types.js';
import type { EmitEvent } from '../events.js';
import {
  reservedOutputTokens,
  type CallSettings,
  type RequestFitter,
  type RequestTokenCounter,
  type Sampling,
} from '../llm/call-model.js';
import type { Workspace } from '../workspace/types.js';
import type { ExecutionMemory } from './types.js';

/** What the run lends a single-shot role. */
export interface SingleShotRun {
  runId: string;
  workspace: Workspace;
  memory: ExecutionMemory;
  emit: EmitEvent;
  now: () => number;
  /** The run's signal, used when a call brings none. */
  signal: AbortSignal;
  /** The backend that writes summaries, and its sampling. */
  summarizer: LlmBackend;
  summarizerSampling: Sampling | undefined;
}

/** A single-shot role's backend and hooks, as `Planner`, `Verifier` and `Manager` take them. */
export interface SingleShotHooks {
  backend: LlmBackend;
  emit: EmitEvent;
  now: () => number;
  countTokens: RequestTokenCounter;
  fit: RequestFitter;
  call: CallSettings;
}

/**
 * Wires one single-shot role: counts calibrated for its backend; every message of its requests protected (it fits
 * whole or fails clearly, never silently cut) with `maxOutputTokens` — at most a quarter of the window — reserved and
 * sent; the provider's usage fed back to the memory when the request's count was exact.
 */
export function singleShotHooks(
  run: SingleShotRun,
  role: { backend: LlmBackend; sampling: Sampling | undefined; maxOutputTokens: number },
): SingleShotHooks {
  const { backend } = role;
  const reserve = reservedOutputTokens(backend.contextWindow, role.maxOutputTokens);
  return {
    backend,
    emit: run.emit,
    now: run.now,
    countTokens: (messages, tools) => run.memory.countRequest(messages, tools, backend),
    fit: (messages, call) =>
      run.memory.fitRequest(
        { messages, tools: call.tools ?? [], protectedCount: messages.length, maxOutputTokens: reserve },
        {
          runId: run.runId,
          purpose: call.purpose,
          scope: call.scope,
          backend,
          summarizer: run.summarizer,
          sampling: run.summarizerSampling,
          workspace: run.workspace,
          signal: call.signal ?? run.signal,
          emit: run.emit,
        },
      ),
    call: {
      sampling: role.sampling,
      maxOutputTokens: reserve,
      // Only an exact count calibrates: a request holding a stretch the counter bounded instead is sized high.
      onUsage: (counted, usage, used, sent) => {
        if (run.memory.sizeRequest?.(sent.messages, sent.tools, used).exact === false) return;
        run.memory.observeUsage?.(used, counted, usage, {
          runId: sent.runId,
          purpose: sent.purpose,
          scope: sent.scope,
          emit: run.emit,
        });
      },
    },
  };
}
