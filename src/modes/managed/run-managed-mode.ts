/**
 * The harness side of managed mode: the same intake, memory, roles, stop control and report as the pipeline, handed
 * to the Manage-Execute-Audit loop of this folder, with the run's checkpointer and the snapshot a resume goes on
 * from.
 * @module
 */
import { runEventSender } from '../../event-bus.js';
import type { EmitEvent } from '../../events.js';
import { readManagedState, runManaged } from './index.js';
import { MemoryManager } from '../../memory/memory-manager.js';
import type { RunResult } from '../../contracts/work.js';
import { copyAttachments } from '../shared/intake.js';
import type { ModeRunInit } from '../shared/run-init.js';
import { newReportTally, reportFromTally, tallyEvent, type ReportTally } from '../shared/report.js';
import { RoleWiring } from '../shared/role-wiring.js';
import { RunControl } from '../shared/run-control.js';
import { assembleResult } from '../shared/run-result.js';

/** Runs one request in managed mode, or resumes one; resolves for every ending, like a pipeline run. @internal */
export async function runManagedMode(init: ModeRunInit): Promise<RunResult> {
  const o = init.options;
  // The run's report is folded from its events inside the loop (and saved with its snapshots): no event log is kept.
  const send: EmitEvent = runEventSender(init.bus, init.now, () => undefined, init.numbering);
  // run-finish waits until the workspace is sealed and unlocked (see ModeRunInit.endWorkspace), as in the pipeline.
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
  // One deadline across resumes: the time used before the stop counts against limits.timeoutMs.
  const control = new RunControl(o.limits, init.resume?.used.elapsedMs ?? 0);
  // A save in flight when the run stops (abort, close, time limit) must not hold it: the store may never answer.
  init.checkpointer?.stopOn?.(control.controller.signal);
  const memory = o.components.memory ?? new MemoryManager(o.memory);
  // The pipeline's report counters, folded inside the loop (limits.maxCost reads them); a resumed run goes on with
  // those of its snapshot.
  const saved = init.resume ? readManagedState<ReportTally>(init.resume.state) : undefined;
  const tally = saved ? structuredClone(saved.tallies.base) : newReportTally();
  const roles = new RoleWiring(o, {
    runId: init.runId,
    workspace: init.workspace,
    registry: init.registry,
    memory,
    emit,
    now: init.now,
    signal: control.controller.signal,
    control,
    costSoFar: () => tally.cost?.total ?? 0,
    context: init.context,
  });
  let attachments: string[];
  try {
    // A resumed run copied its attachments before it stopped.
    attachments = saved ? saved.attachments : await copyAttachments(init.workspace, init.attachments);
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
      tally,
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
    backendFor: roles.backendFor,
    samplingFor: roles.samplingFor,
    maxOutputTokens: o.limits.maxOutputTokens,
    memory,
    registry: init.registry,
    context: init.context,
    ...(init.output ? { output: { request: init.output, call: roles.typedOutputCall() } } : {}),
    limits: {
      maxIterations: o.limits.maxIterations,
      timeoutMs: o.limits.timeoutMs,
      toolTimeoutMs: o.limits.toolTimeoutMs,
      maxRunIterations: o.limits.maxRunIterations,
    },
    options: o.managed,
    instructions: o.instructions,
    verifier: (runEmit) => roles.verifier(runEmit),
    control,
    baseReport: {
      tally,
      add: (event) => tallyEvent(tally, event),
      report: (wallTimeMs, verdicts) => reportFromTally(tally, { wallTimeMs, subtasks: [], verdicts }),
    },
    checkpointer: init.checkpointer,
    resume: init.resume,
    dataMark: init.dataMark,
  });
  return finish(result);
}
