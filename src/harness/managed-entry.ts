/**
 * The harness side of managed mode: the same intake, memory, roles, stop control and report as the pipeline, handed
 * to the Manage-Execute-Audit loop of `src/managed`.
 * @module
 */
import { runEventSender, type EmitEvent, type HarnessEvent } from '../events.js';
import { runManaged } from '../managed/index.js';
import { MemoryManager } from '../memory/memory-manager.js';
import type { RunResult } from '../pipeline/types.js';
import { copyAttachments } from './intake.js';
import type { PipelineRunInit } from './pipeline-run.js';
import { buildReport, newReportTally } from './report.js';
import { RoleWiring } from './role-wiring.js';
import { RunControl } from './run-control.js';
import { assembleResult } from './run-result.js';

/** Runs one request in managed mode; resolves for every ending, like a pipeline run. @internal */
export async function runManagedMode(init: PipelineRunInit): Promise<RunResult> {
  const o = init.options;
  const log: HarnessEvent[] = [];
  const send: EmitEvent = runEventSender(init.bus, init.now, (event) => log.push(event));
  // run-finish waits until the workspace is sealed and unlocked (see PipelineRunInit.endWorkspace), as in the pipeline.
  let finishEvent: Parameters<EmitEvent>[0] | undefined;
  const emit: EmitEvent = (event) => {
    if (event.type === 'run-finish' && event.runId === init.runId) finishEvent = event;
    else send(event);
  };
  const finish = async (result: RunResult): Promise<RunResult> => {
    await init.endWorkspace?.(result.status);
    send(finishEvent ?? { type: 'run-finish', runId: init.runId, result });
    return result;
  };
  const startedAt = init.now();
  const control = new RunControl(o.limits);
  const memory = o.components.memory ?? new MemoryManager(o.memory);
  const roles = new RoleWiring(o, {
    runId: init.runId,
    workspace: init.workspace,
    registry: init.registry,
    memory,
    emit,
    now: init.now,
    signal: control.controller.signal,
  });
  let attachments: string[];
  try {
    attachments = await copyAttachments(init.workspace, init.attachments);
  } catch (error) {
    // The loop never started: end the run as a pipeline run ends a failed intake.
    const failure = control.asStop(error, 'intake');
    emit({ type: 'run-error', runId: init.runId, error: failure.error, stage: failure.stage });
    const result = assembleResult({
      runId: init.runId,
      failure,
      deliverable: { answer: '', files: [] },
      plan: [],
      records: [],
      verdicts: [],
      workspace: init.workspace.root,
      tally: newReportTally(),
      wallTimeMs: Math.max(0, init.now() - startedAt),
    });
    return finish(result);
  }
  const result = await runManaged({
    runId: init.runId,
    task: init.task,
    attachments,
    workspace: init.workspace,
    signal: init.signal,
    now: init.now,
    emit,
    log,
    backendFor: roles.backendFor,
    samplingFor: roles.samplingFor,
    maxOutputTokens: o.limits.maxOutputTokens,
    memory,
    registry: init.registry,
    limits: {
      maxIterations: o.limits.maxIterations,
      timeoutMs: o.limits.timeoutMs,
      toolTimeoutMs: o.limits.toolTimeoutMs,
    },
    options: o.managed,
    control,
    baseReport: (events, wallTimeMs) => buildReport(events, { wallTimeMs, subtasks: [], verdicts: [] }),
  });
  return finish(result);
}
