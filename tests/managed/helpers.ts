import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { GenerateRequest, GenerateResult, LlmBackend } from '../../src/backend/types.js';
import { HarnessEvents } from '../../src/event-bus.js';
import type { HarnessEvent, HarnessEventType, EventOf } from '../../src/events.js';
import { newReportTally, reportFromTally, tallyEvent } from '../../src/modes/shared/report.js';
import { RunControl } from '../../src/modes/shared/run-control.js';
import {
  runManaged,
  type ManagedOptions,
  type ManagedRunInit,
  type ManagedRunResult,
} from '../../src/modes/managed/index.js';
import type { AuditFinding, RecordDraft } from '../../src/modes/managed/index.js';
import { MemoryManager } from '../../src/memory/memory-manager.js';
import { reply, submit, toolCall, verdict } from '../../src/testing/index.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { Tool } from '../../src/tools/types.js';
import { LocalWorkspace } from '../../src/workspace/local-workspace.js';
import { tempDir, writeFile as writeFileTool } from '../harness/helpers.js';

export { tempDir, writeFileTool };

/** Writes an executable bash script into `dir` and returns its path. */
export async function script(dir: string, name: string, body: string): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, `#!/usr/bin/env bash\n${body}\n`);
  await chmod(file, 0o755);
  return file;
}

export const TASK = 'Write report.md with the heading "# Rivers".';

/** One managed run wired the way the harness wires it, with its event log. */
export interface TestRun {
  init: ManagedRunInit;
  log: HarnessEvent[];
  bus: HarnessEvents;
  workspace: LocalWorkspace;
  run(): Promise<ManagedRunResult>;
  /** The events of one type, in order. */
  events<T extends HarnessEventType>(type: T): Array<EventOf<T>>;
}

/** Builds a managed run on `backend` in a fresh workspace: the harness's RunControl, report and memory. */
export async function managedRun(setup: {
  backend: LlmBackend;
  options?: ManagedOptions;
  tools?: Tool[];
  limits?: Partial<ManagedRunInit['limits']>;
  signal?: AbortSignal;
  task?: string;
  attachments?: string[];
}): Promise<TestRun> {
  const workspace = await LocalWorkspace.create({ dir: await tempDir() });
  const bus = new HarnessEvents();
  const log: HarnessEvent[] = [];
  const limits = { maxIterations: 200, timeoutMs: 60_000, toolTimeoutMs: 30_000, ...setup.limits };
  const tally = newReportTally();
  const init: ManagedRunInit = {
    runId: 'run-1',
    task: setup.task ?? TASK,
    attachments: setup.attachments ?? [],
    workspace,
    signal: setup.signal,
    now: Date.now,
    emit: (event) => {
      const stamped = { ...event, timestamp: Date.now() } as HarnessEvent;
      log.push(stamped);
      bus.send(stamped);
    },
    backendFor: () => setup.backend,
    samplingFor: () => undefined,
    maxOutputTokens: 4_096,
    memory: new MemoryManager(),
    registry: new ToolRegistry(setup.tools ?? [writeFileTool]),
    limits,
    options: setup.options ?? {},
    control: new RunControl(limits),
    baseReport: {
      tally,
      add: (event) => tallyEvent(tally, event),
      report: (wallTimeMs, verdicts) => reportFromTally(tally, { wallTimeMs, subtasks: [], verdicts }),
    },
  };
  return {
    init,
    log,
    bus,
    workspace,
    run: () => runManaged(init),
    events: <T extends HarnessEventType>(type: T) => log.filter((e): e is EventOf<T> => e.type === type),
  };
}

/** Writes a text file in the workspace; its observation carries a marker that must never reach the manager. */
/** A manager reply. */
export function decide(
  next: 'execute' | 'done' | 'blocked' | 'ask',
  extra: {
    records?: RecordDraft[];
    contract?: { task: string; acceptanceCriteria: string[]; boundaries?: string[]; recordIds?: string[] };
    question?: string;
    reason?: string;
    /** With `done`: the manager's final answer to the request. */
    answer?: string;
  } = {},
): GenerateResult {
  return reply(JSON.stringify({ records: extra.records ?? [], next, ...extra }));
}

/** A manager reply that adds `records` and executes a contract for them. */
export function executeRecords(records: RecordDraft[], task = 'Do the work.'): GenerateResult {
  return decide('execute', {
    records,
    contract: { task, acceptanceCriteria: records.map((r) => r.description), boundaries: ['Touch nothing else.'] },
  });
}

/** An auditor's verdict, submitted through submit_answer as the built-in auditor does. */
export function verdictOf(
  status: 'complete' | 'incomplete' | 'blocked',
  integrity: 'clean' | 'suspect' | 'violation',
  findings: AuditFinding[],
): GenerateResult {
  return submit(JSON.stringify({ status, integrity, findings }));
}

/** The state file as it is on disk now. */
export async function stateOnDisk(workspace: LocalWorkspace): Promise<unknown> {
  return JSON.parse(await readFile(path.join(workspace.root, '.harness/task-state.json'), 'utf8'));
}

/** The record of {@link reportModel}'s run. */
export const REPORT_RECORD = { id: 'report', description: 'report.md starts with "# Rivers".' };

/**
 * A whole managed run's model, a function of the request only (so a resumed run is asked what a stopped one would
 * have been): the manager asks for report.md, the executor writes it with `write_file`, the auditor reads it and
 * completes the record, the final verification passes. `callIds` names the write and read calls.
 */
export function reportModel(request: GenerateRequest, callIds: { write?: string; read?: string } = {}): GenerateResult {
  const all = request.messages.map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n');
  const lastIsTool = request.messages.at(-1)?.role === 'tool';
  switch (request.purpose) {
    case 'manage':
      if (all.includes('[completed] report:')) return decide('done');
      return decide('execute', {
        records: [REPORT_RECORD],
        contract: {
          task: 'Write report.md.',
          acceptanceCriteria: [REPORT_RECORD.description],
          recordIds: [REPORT_RECORD.id],
        },
      });
    case 'execute':
      if (lastIsTool) return submit('I wrote report.md.', ['report.md']);
      return toolCall('write_file', { path: 'report.md', content: '# Rivers\n' }, callIds.write);
    case 'verify':
      return verdict(true);
    default:
      if (!lastIsTool) return toolCall('read_file', { path: 'report.md' }, callIds.read);
      return verdictOf('complete', 'clean', [
        { recordId: 'report', check: 'report.md starts with "# Rivers"', observed: '# Rivers', verdict: 'pass' },
      ]);
  }
}
