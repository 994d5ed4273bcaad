import { toHarnessError } from '../errors.js';
import type { ToolInvocation } from '../tools/types.js';
import type { Workspace } from '../workspace/types.js';
import type { MemoryScope } from './types.js';

/** Where full tool outputs are saved, relative to the workspace root. */
export const OUTPUTS_DIR = '.harness/outputs';

/** Where a full output was saved: a range of lines of its scope's log, or nowhere when saving failed. @internal */
export type SavedOutput =
  | { path: string; lines: { start: number; end: number }; location: string }
  | { path: string; lines?: undefined; location: undefined };

interface LogState {
  /** The last append queued on this log; the next one starts after it. */
  tail: Promise<unknown>;
  /** Size in bytes and lines of the log after this manager's last append, as far as it knows. */
  bytes: number;
  lines: number;
}

function linesIn(bytes: Uint8Array): number {
  let lines = 0;
  for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) lines++;
  return lines;
}

function callKey(runId: string, scope: string, callId: string): string {
  return `${runId}\u0000${scope}\u0000${callId}`;
}

function safeName(text: string): string {
  return text.replace(/[^\w.-]/g, '_');
}

/**
 * The log of full tool outputs of each scope, `.harness/outputs/<scope>.txt`, written through the scope's
 * {@link Workspace} (so a host's own workspace, such as a container or a remote volume, holds it). Each output is one
 * append under a header line; creating a file per output would cost far more than appending to one.
 * @internal
 */
export class OutputLog {
  private readonly logs = new WeakMap<Workspace, Map<string, LogState>>();
  // Saved outputs by run, scope and call, kept only when asked for: aging digests point at them.
  private readonly locations = new Map<string, string>();

  constructor(private readonly remember: boolean) {}

  /**
   * Appends a full output to its scope's log and says where it stands. Appends to one log are queued in call order,
   * so the parallel calls of one reply (started one after another) get consecutive line ranges. Never rejects: a
   * failed save is a `run-warning` (`output-save-failed`) and a result without location.
   */
  save(invocation: ToolInvocation, scope: MemoryScope): Promise<SavedOutput> {
    const path = `${OUTPUTS_DIR}/${safeName(scope.scope)}.txt`;
    const body = invocation.text.endsWith('\n') ? invocation.text : `${invocation.text}\n`;
    const block = `===== ${invocation.toolName} ${invocation.callId} =====\n${body}`;
    const log = this.stateOf(scope.workspace, path);
    const saved = log.tail.then(() => this.append(log, path, block, invocation, scope));
    log.tail = saved;
    return saved;
  }

  /** Where the full output of a call was saved, when this log remembers locations. */
  locationOf(runId: string, scope: string, callId: string): string | undefined {
    return this.locations.get(callKey(runId, scope, callId));
  }

  private stateOf(workspace: Workspace, path: string): LogState {
    let logs = this.logs.get(workspace);
    if (!logs) {
      logs = new Map();
      this.logs.set(workspace, logs);
    }
    let log = logs.get(path);
    if (!log) {
      log = { tail: Promise.resolve(), bytes: 0, lines: 0 };
      logs.set(path, log);
    }
    return log;
  }

  private async append(
    log: LogState,
    path: string,
    block: string,
    invocation: ToolInvocation,
    scope: MemoryScope,
  ): Promise<SavedOutput> {
    const data = Buffer.from(block, 'utf8');
    try {
      const { size } = await scope.workspace.appendFile(path, data, { tool: 'harness', scope: scope.scope });
      const start = size - data.byteLength;
      // Starting anywhere but where this manager's last append ended means someone else wrote to the log (an earlier
      // attempt, another manager): count its lines, once, since later appends continue from here.
      const before =
        start === log.bytes ? log.lines : linesIn((await scope.workspace.readFile(path)).subarray(0, start));
      const lines = { start: before + 2, end: before + linesIn(data) };
      log.bytes = size;
      log.lines = lines.end;
      const location = `${path} lines ${lines.start}-${lines.end}`;
      if (this.remember) this.locations.set(callKey(scope.runId, scope.scope, invocation.callId), location);
      return { path, lines, location };
    } catch (error) {
      scope.emit({
        type: 'run-warning',
        runId: scope.runId,
        code: 'output-save-failed',
        message:
          `The full ${invocation.text.length}-character output of ${invocation.toolName} (call ${invocation.callId}) ` +
          `could not be saved to ${path} (${toHarnessError(error).message}); the model sees only its bounded observation.`,
        purpose: scope.purpose,
        scope: scope.scope,
      });
      return { path, location: undefined };
    }
  }
}
