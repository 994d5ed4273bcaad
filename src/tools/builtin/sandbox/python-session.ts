/**
 * One persistent python3 process running {@link PYTHON_DRIVER}: cells are queued, each one's stdout and stderr end at
 * a per-cell nonce barrier, results arrive on a separate descriptor, and every buffer is bounded. Nothing the
 * program prints or writes can throw inside the harness: a malformed result ends the session, reported as such.
 * @module
 */
import type { Readable } from 'node:stream';
import { OutputCapture } from './output-capture.js';
import { spawnInWorkspace, type SpawnInWorkspaceOptions, type WorkspaceProcess } from '../sandbox.js';
import type { AppliedLimits } from './resource-limits.js';
import { PYTHON_DRIVER } from './python-driver.js';

/** What one cell produced. */
export interface CellReply {
  stdout: string;
  stderr: string;
  result: string | null;
  error: string | null;
  /** Set when the session ended: timeout, abort, the process exiting, or a message breaking the result protocol. */
  ended?: 'timeout' | 'aborted' | 'exited' | 'protocol';
  exitCode?: number | null;
  /** Why the session was ended for breaking the protocol. */
  protocolError?: string;
}

/** Longest result-channel line accepted; the driver caps result and traceback at 20 000 characters each. */
const MAX_RESULT_LINE = 1_000_000;
/** Output read after a cell's barrier is kept for the next cell, up to this many characters (the rest is dropped). */
const MAX_LEFTOVER = 65_536;

type StreamName = 'stdout' | 'stderr';

/** Collects one stream of one cell up to the line `\n<nonce>\n`, keeping only a marker-sized carry unscanned. */
class BarrierCollector {
  readonly capture: OutputCapture;
  private carry = '';
  done = false;

  constructor(
    private readonly marker: string,
    maxChars: number,
  ) {
    this.capture = new OutputCapture(maxChars);
  }

  /** Takes a chunk; once the barrier is found, returns what followed it in the chunk. */
  push(chunk: string): string | undefined {
    const text = this.carry + chunk;
    const at = text.indexOf(this.marker);
    if (at >= 0) {
      this.capture.push(text.slice(0, at));
      this.carry = '';
      this.done = true;
      return text.slice(at + this.marker.length);
    }
    const keep = Math.min(text.length, this.marker.length - 1);
    this.capture.push(text.slice(0, text.length - keep));
    this.carry = text.slice(text.length - keep);
    return undefined;
  }

  /** Ends the stream without a barrier (the process ended, or the driver could not write it). */
  close(): void {
    this.capture.push(this.carry);
    this.carry = '';
    this.done = true;
  }
}

interface ResultMessage {
  nonce: string;
  result: string | null;
  error: string | null;
  barriers: boolean;
}

function parseResult(line: string): ResultMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { nonce, result, error, barriers } = value as Record<string, unknown>;
  const textOrNull = (field: unknown): field is string | null => field === null || typeof field === 'string';
  if (typeof nonce !== 'string' || !textOrNull(result) || !textOrNull(error) || typeof barriers !== 'boolean')
    return undefined;
  return { nonce, result, error, barriers };
}

interface ActiveCell {
  nonce: string;
  stdout: BarrierCollector;
  stderr: BarrierCollector;
  reply?: ResultMessage;
  ended?: CellReply['ended'];
  resolve(reply: CellReply): void;
}

/** Spawn options of a session: where and how python3 runs. */
export type PythonSpawnOptions = Omit<SpawnInWorkspaceOptions, 'stdio' | 'cwd'>;

/** One persistent python3 process. */
export class PythonSession {
  private readonly proc: WorkspaceProcess;
  private exited = false;
  private exitCode: number | null = null;
  private protocolError: string | undefined;
  private cell: ActiveCell | undefined;
  private readonly leftover: Record<StreamName, string> = { stdout: '', stderr: '' };
  private results = '';
  private queue: Promise<unknown> = Promise.resolve();

  constructor(python: string, spawn: PythonSpawnOptions) {
    this.proc = spawnInWorkspace(python, ['-u', '-c', PYTHON_DRIVER], {
      ...spawn,
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    });
    const { child } = this.proc;
    this.stream('stdout')
      .setEncoding('utf8')
      .on('data', (chunk: string) => this.onOutput('stdout', chunk));
    this.stream('stderr')
      .setEncoding('utf8')
      .on('data', (chunk: string) => this.onOutput('stderr', chunk));
    this.pauseOutput();
    (child.stdio[3] as Readable | null)?.setEncoding('utf8').on('data', (chunk: string) => this.onResults(chunk));
    (child.stdio[3] as Readable | null)?.on('error', () => undefined);
    child.stdin?.on('error', () => undefined);
    // Whatever the program left running may hold the pipes open; it ends with the program.
    child.once('exit', () => {
      this.proc.kill();
      this.resumeOutput();
    });
    child.once('error', () => this.onClose(null));
    child.once('close', (code) => this.onClose(code));
  }

  get alive(): boolean {
    return !this.exited;
  }

  /** The memory and `/tmp` limits the session runs under. */
  get limits(): AppliedLimits {
    return this.proc.limits;
  }

  /** Processes of the session the kernel killed for going past its memory limit, so far. */
  oomKills(): Promise<number> {
    return this.proc.oomKills();
  }

  /** Kills the process and everything it started. */
  kill(): void {
    this.proc.kill();
  }

  /** Runs one cell; calls are queued so that parallel tool calls in one scope do not interleave. */
  run(code: string, timeoutMs: number, signal: AbortSignal, maxChars: number): Promise<CellReply> {
    const next = this.queue.then(() => this.runNow(code, timeoutMs, signal, maxChars));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private stream(name: StreamName): Readable {
    return this.proc.child[name] as Readable;
  }

  private pauseOutput(): void {
    // Between cells nothing is read: a program flooding its output blocks on a full pipe instead of filling memory.
    this.stream('stdout').pause();
    this.stream('stderr').pause();
  }

  private resumeOutput(): void {
    this.stream('stdout').resume();
    this.stream('stderr').resume();
  }

  private runNow(code: string, timeoutMs: number, signal: AbortSignal, maxChars: number): Promise<CellReply> {
    return new Promise((resolve) => {
      const nonce = process.getBuiltinModule('node:crypto').randomBytes(16).toString('hex');
      const marker = `\n${nonce}\n`;
      const cell: ActiveCell = {
        nonce,
        stdout: new BarrierCollector(marker, maxChars),
        stderr: new BarrierCollector(marker, maxChars),
        resolve,
      };
      const onAbort = (): void => {
        cell.ended ??= 'aborted';
        this.kill();
      };
      const timer = setTimeout(() => {
        cell.ended ??= 'timeout';
        this.kill();
      }, timeoutMs);
      cell.resolve = (reply) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        resolve(reply);
      };
      this.cell = cell;
      if (this.exited) return this.finish();
      signal.addEventListener('abort', onAbort, { once: true });
      if (signal.aborted) return onAbort();
      for (const name of ['stdout', 'stderr'] as const) {
        const pending = this.leftover[name];
        this.leftover[name] = '';
        if (pending) this.onOutput(name, pending);
      }
      this.resumeOutput();
      this.proc.child.stdin?.write(`${JSON.stringify({ nonce, code })}\n`);
    });
  }

  private onOutput(name: StreamName, chunk: string): void {
    const collector = this.cell?.[name];
    if (!collector || collector.done) {
      this.leftover[name] = (this.leftover[name] + chunk).slice(-MAX_LEFTOVER);
      return;
    }
    const rest = collector.push(chunk);
    if (rest === undefined) return;
    this.stream(name).pause();
    this.leftover[name] = rest.slice(-MAX_LEFTOVER);
    this.finishIfComplete();
  }

  private onResults(chunk: string): void {
    if (this.protocolError) return;
    this.results += chunk;
    let newline = this.results.indexOf('\n');
    while (newline >= 0 && !this.protocolError) {
      const line = this.results.slice(0, newline);
      this.results = this.results.slice(newline + 1);
      this.onResultLine(line);
      newline = this.results.indexOf('\n');
    }
    if (this.results.length > MAX_RESULT_LINE)
      this.breakProtocol(`a result message longer than ${MAX_RESULT_LINE} characters`);
  }

  private onResultLine(line: string): void {
    const message = parseResult(line);
    const cell = this.cell;
    if (!message) {
      this.breakProtocol('a malformed result message');
      return;
    }
    if (!cell || cell.reply || message.nonce !== cell.nonce) {
      this.breakProtocol('a result message for no running cell');
      return;
    }
    cell.reply = message;
    if (!message.barriers) {
      cell.stdout.close();
      cell.stderr.close();
    }
    this.finishIfComplete();
  }

  private breakProtocol(reason: string): void {
    this.protocolError = reason;
    this.results = '';
    this.kill();
  }

  private finishIfComplete(): void {
    const cell = this.cell;
    if (cell?.reply && cell.stdout.done && cell.stderr.done) this.finish();
  }

  private onClose(code: number | null): void {
    if (this.exited) return;
    this.exited = true;
    this.exitCode = code;
    void this.proc.dispose();
    this.finish();
  }

  private finish(): void {
    const cell = this.cell;
    if (!cell) return;
    this.cell = undefined;
    const complete = cell.reply !== undefined && cell.stdout.done && cell.stderr.done;
    if (!complete) {
      cell.stdout.close();
      cell.stderr.close();
    } else this.pauseOutput();
    const reply: CellReply = {
      stdout: cell.stdout.capture.toString(),
      stderr: cell.stderr.capture.toString(),
      result: cell.reply?.result ?? null,
      error: cell.reply?.error ?? null,
    };
    if (!complete) {
      reply.ended = cell.ended ?? (this.protocolError ? 'protocol' : 'exited');
      if (reply.ended === 'exited') reply.exitCode = this.exitCode;
      if (reply.ended === 'protocol') reply.protocolError = this.protocolError;
    }
    cell.resolve(reply);
  }
}
