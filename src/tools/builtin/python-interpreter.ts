import { spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { DEFAULTS } from '../../defaults.js';
import { HarnessError } from '../../errors.js';
import { defineTool } from '../define-tool.js';
import type { Tool, ToolContext } from '../types.js';
import { requireApproval, type ApproveFn } from './command-policy.js';
import { OutputCapture, recordChanges } from './execute-command.js';
import { killProcessTree, sandboxStatus, scrubEnv, snapshotFiles, spawnInWorkspace, type SandboxMode, type SandboxStatus } from './sandbox.js';
import { parseOptions } from './search-providers/http.js';

/** Options of {@link pythonInterpreterTool}. */
export interface PythonInterpreterToolOptions {
  /** @defaultValue 'python3' */
  python?: string;
  /**
   * Per-call timeout; on timeout the session is killed and the next call starts a fresh one.
   * @defaultValue 120000
   */
  timeoutMs?: number;
  /** @defaultValue 'auto' */
  sandbox?: SandboxMode;
  /** @defaultValue 'bwrap' */
  bwrapPath?: string;
  /**
   * Let sandboxed Python use the network.
   * @defaultValue false
   */
  allowNetwork?: boolean;
  /** Decides each call when no sandbox is available (mode `auto` without bwrap); without it such calls are refused. */
  approve?: ApproveFn;
  /**
   * Characters of stdout and of stderr kept (head and tail) per call.
   * @defaultValue 20000
   */
  maxOutputChars?: number;
  /** Variables added to the scrubbed environment. */
  env?: Record<string, string>;
}

const OptionsSchema = z.object({
  python: z.string().min(1).default('python3'),
  timeoutMs: z.number().int().min(100).max(86_400_000).default(DEFAULTS.toolTimeoutMs),
  sandbox: z.enum(['auto', 'bwrap', 'none']).default('auto'),
  bwrapPath: z.string().min(1).default('bwrap'),
  allowNetwork: z.boolean().default(false),
  approve: z.custom<ApproveFn>((value) => typeof value === 'function', 'must be a function').optional(),
  maxOutputChars: z.number().int().min(200).max(10_000_000).default(20_000),
  env: z.record(z.string(), z.string()).default({}),
});
type Resolved = z.output<typeof OptionsSchema>;

const PythonInput = z.object({
  code: z.string().default('').describe('Python code to run. The value of a final expression is shown, like in a notebook.'),
  reset: z.boolean().optional().describe('Start a fresh session (all variables are lost) before running the code.'),
});

/**
 * The driver running inside python3: reads one JSON request per line from the real stdin, runs it in a persistent
 * namespace, and ends each reply with a marker line on stdout (carrying the result) and on stderr.
 */
const DRIVER = String.raw`
import ast, json, os, sys, traceback
_mark = sys.argv[1]
_requests = sys.stdin
sys.stdin = open(os.devnull)
_ns = {'__name__': '__main__', '__builtins__': __builtins__}
def _run(code):
    try:
        tree = ast.parse(code, '<cell>', 'exec')
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, '<cell>', 'exec'), _ns)
        if last is not None:
            value = eval(compile(last, '<cell>', 'eval'), _ns)
            if value is not None:
                text = repr(value)
                return (text if len(text) <= 20000 else text[:20000] + '...'), None
        return None, None
    except SystemExit as exc:
        return None, 'SystemExit: %r' % (exc.code,)
    except BaseException:
        kind, exc, tb = sys.exc_info()
        return None, ''.join(traceback.format_exception(kind, exc, tb.tb_next if tb is not None else None))
while True:
    line = _requests.readline()
    if not line:
        break
    result, error = _run(json.loads(line)['code'])
    sys.stdout.flush()
    sys.stderr.flush()
    sys.__stdout__.write('\n' + _mark + json.dumps({'result': result, 'error': error}) + '\n')
    sys.__stdout__.flush()
    sys.__stderr__.write('\n' + _mark + '\n')
    sys.__stderr__.flush()
`;

interface CellReply {
  stdout: string;
  stderr: string;
  result: string | null;
  error: string | null;
  /** Set when the session ended: timeout, abort or the process exiting. */
  ended?: 'timeout' | 'aborted' | 'exited';
  exitCode?: number | null;
}

/** One persistent python3 process. */
class PythonSession {
  private readonly child: ChildProcess;
  private readonly marker = `__HH_${randomBytes(8).toString('hex')}__`;
  private stdoutBuffer = '';
  private stderrBuffer = '';
  private exited = false;
  private exitCode: number | null = null;
  private waiter: (() => void) | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(opts: Resolved, status: SandboxStatus, root: string) {
    this.child = spawnInWorkspace(opts.python, ['-u', '-c', DRIVER, this.marker], {
      workspaceRoot: root,
      sandbox: status,
      allowNetwork: opts.allowNetwork,
      env: { ...scrubEnv(), MPLBACKEND: 'Agg', PYTHONDONTWRITEBYTECODE: '1', PYTHONIOENCODING: 'utf-8', ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdoutBuffer += chunk;
      this.waiter?.();
    });
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderrBuffer += chunk;
      this.waiter?.();
    });
    this.child.stdin?.on('error', () => undefined);
    this.child.once('error', () => this.onExit(null));
    this.child.once('close', (code) => this.onExit(code));
  }

  get alive(): boolean {
    return !this.exited;
  }

  private onExit(code: number | null): void {
    this.exited = true;
    this.exitCode = code;
    this.waiter?.();
  }

  kill(): void {
    killProcessTree(this.child);
  }

  /** Runs one cell; calls are queued so that parallel tool calls in one scope do not interleave. */
  run(code: string, timeoutMs: number, signal: AbortSignal, maxChars: number): Promise<CellReply> {
    const next = this.queue.then(() => this.runNow(code, timeoutMs, signal, maxChars));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private runNow(code: string, timeoutMs: number, signal: AbortSignal, maxChars: number): Promise<CellReply> {
    const stdout = new OutputCapture(maxChars);
    const stderr = new OutputCapture(maxChars);
    return new Promise((resolve) => {
      let ended: CellReply['ended'];
      const stdoutEnd = `\n${this.marker}`;
      const stderrEnd = `\n${this.marker}\n`;
      let reply: { result: string | null; error: string | null } | undefined;
      let stderrDone = false;
      const finish = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.waiter = undefined;
        const out: CellReply = { stdout: stdout.toString(), stderr: stderr.toString(), result: reply?.result ?? null, error: reply?.error ?? null };
        if (ended) out.ended = ended;
        if (ended === 'exited') out.exitCode = this.exitCode;
        resolve(out);
      };
      const pump = (): void => {
        if (!reply) {
          const at = this.stdoutBuffer.indexOf(stdoutEnd);
          const lineEnd = at < 0 ? -1 : this.stdoutBuffer.indexOf('\n', at + stdoutEnd.length);
          if (lineEnd >= 0) {
            stdout.push(this.stdoutBuffer.slice(0, at));
            reply = JSON.parse(this.stdoutBuffer.slice(at + stdoutEnd.length, lineEnd)) as { result: string | null; error: string | null };
            this.stdoutBuffer = this.stdoutBuffer.slice(lineEnd + 1);
          } else {
            // Keep a possible partial marker buffered; pass the rest on.
            const keep = Math.max(0, this.stdoutBuffer.length - stdoutEnd.length);
            if (at < 0 && keep > 0) {
              stdout.push(this.stdoutBuffer.slice(0, keep));
              this.stdoutBuffer = this.stdoutBuffer.slice(keep);
            }
          }
        }
        if (!stderrDone) {
          const at = this.stderrBuffer.indexOf(stderrEnd);
          if (at >= 0) {
            stderr.push(this.stderrBuffer.slice(0, at));
            this.stderrBuffer = this.stderrBuffer.slice(at + stderrEnd.length);
            stderrDone = true;
          } else {
            const keep = Math.max(0, this.stderrBuffer.length - stderrEnd.length);
            if (keep > 0) {
              stderr.push(this.stderrBuffer.slice(0, keep));
              this.stderrBuffer = this.stderrBuffer.slice(keep);
            }
          }
        }
        if (reply && stderrDone) finish();
        else if (this.exited) {
          stdout.push(this.stdoutBuffer);
          stderr.push(this.stderrBuffer);
          this.stdoutBuffer = '';
          this.stderrBuffer = '';
          ended ??= 'exited';
          finish();
        }
      };
      const onAbort = (): void => {
        ended = 'aborted';
        this.kill();
      };
      const timer = setTimeout(() => {
        ended = 'timeout';
        this.kill();
      }, timeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiter = pump;
      if (signal.aborted) onAbort();
      else if (this.exited) pump();
      else this.child.stdin?.write(`${JSON.stringify({ code })}\n`);
    });
  }
}

/** Throws `HarnessError('tool-unavailable')` unless `python` runs and is Python 3. */
function checkPython(python: string): void {
  const probe = spawnSync(python, ['-c', 'import sys; print(sys.version_info[0])'], { encoding: 'utf8', timeout: 15_000 });
  if (probe.error || probe.status !== 0 || probe.stdout.trim() !== '3') {
    const why = probe.error ? probe.error.message : probe.status !== 0 ? `exit status ${String(probe.status)}` : `it is Python ${probe.stdout.trim()}`;
    throw new HarnessError(
      'tool-unavailable',
      `python_interpreter needs Python 3, but "${python}" cannot be used (${why}). Install it (Debian/Ubuntu: apt-get install python3; ` +
        'macOS: brew install python), pass its path as option "python", or leave the python_interpreter tool out.',
    );
  }
}

/** `pythonInterpreterTool()`'s tool, with the sandbox status the harness reports. */
export type PythonInterpreterTool = Tool<z.output<typeof PythonInput>> & {
  /** Whether Python runs in bwrap; `warning` belongs in the run's `run-start` warnings. */
  readonly sandbox: SandboxStatus;
};

/**
 * The paper's `python_interpreter` tool: a persistent Python 3 session per executor scope (variables survive
 * between calls; `reset` starts over), cwd = workspace root, a timeout per call (the session is killed and restarted),
 * stdout, stderr and the last expression's value captured, files written recorded as artifacts. Runs in bubblewrap
 * when available. Throws `HarnessError('tool-unavailable')` at creation when Python 3 is missing.
 *
 * @example
 * ```ts
 * const python = pythonInterpreterTool({ timeoutMs: 60_000 });
 * ```
 */
export function pythonInterpreterTool(options: PythonInterpreterToolOptions = {}): PythonInterpreterTool {
  const opts = parseOptions(OptionsSchema, options, 'pythonInterpreterTool');
  checkPython(opts.python);
  const status = sandboxStatus(opts.sandbox, opts.bwrapPath);
  const sessions = new Map<string, PythonSession>();

  const session = (ctx: ToolContext, reset: boolean): PythonSession => {
    const key = `${ctx.runId}\u0000${ctx.scope}`;
    let current = sessions.get(key);
    if (current && (reset || !current.alive)) {
      current.kill();
      current = undefined;
    }
    if (!current) {
      const created = new PythonSession(opts, status, ctx.workspace.root);
      if (!sessions.has(key)) {
        ctx.onScopeEnd(() => {
          sessions.get(key)?.kill();
          sessions.delete(key);
        });
      }
      sessions.set(key, created);
      current = created;
    }
    return current;
  };

  const tool = defineTool({
    name: 'python_interpreter',
    description:
      'Run Python 3 code in a persistent session (variables and imports survive between calls; reset=true starts over). ' +
      'The working directory is the workspace root; save files there. Prints, errors and the value of a final expression are returned.' +
      (status.active && !opts.allowNetwork ? ' There is no network access.' : ''),
    input: PythonInput,
    readOnly: false,
    observation: 'text',
    timeoutMs: opts.timeoutMs + 10_000,
    async execute({ code, reset }, ctx) {
      if (status.requiresApproval && code.trim() !== '') {
        await requireApproval(
          { tool: 'python_interpreter', command: code, reason: `no sandbox: ${status.reason}`, parts: [], sandboxed: false, cwd: ctx.workspace.root, runId: ctx.runId, scope: ctx.scope },
          opts.approve,
        );
      }
      const python = session(ctx, reset === true);
      if (code.trim() === '') return reset ? 'The Python session was reset; all variables are cleared.' : 'No code given.';
      const before = await snapshotFiles(ctx.workspace.root);
      const reply = await python.run(code, opts.timeoutMs, ctx.signal, opts.maxOutputChars);
      const files = await recordChanges(ctx, 'python_interpreter', before);
      const lines: string[] = [];
      if (reset) lines.push('(fresh session)');
      if (reply.stdout.replace(/\n$/, '')) lines.push('--- stdout ---', reply.stdout.replace(/\n$/, ''));
      if (reply.stderr.replace(/\n$/, '')) lines.push('--- stderr ---', reply.stderr.replace(/\n$/, ''));
      if (reply.error) lines.push('--- error ---', reply.error.replace(/\n$/, ''));
      if (reply.result !== null) lines.push('--- result ---', reply.result);
      if (reply.ended === 'timeout') {
        lines.push(`Timed out after ${opts.timeoutMs} ms; the Python session was killed and the next call starts a fresh one (variables are lost).`);
      } else if (reply.ended === 'aborted') {
        lines.push('Aborted; the Python session was killed (variables are lost).');
      } else if (reply.ended === 'exited') {
        lines.push(`The Python process exited (code ${String(reply.exitCode)}); the next call starts a fresh session (variables are lost).`);
      }
      if (lines.length === 0 || (lines.length === 1 && reset)) lines.push('(no output)');
      if (files.length > 0) lines.push(`Files created or changed: ${files.join(', ')}`);
      return { text: lines.join('\n'), files };
    },
  });
  return Object.freeze({ ...tool, sandbox: status, warnings: status.warning ? [status.warning] : [] });
}
