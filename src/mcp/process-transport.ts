/**
 * An MCP stdio client transport that also remembers how the server process ended. The SDK's `StdioClientTransport`
 * does not expose the exit code, signal or stderr of a crashed server, and the error the model sees after a crash
 * must name them; the framing (one JSON-RPC message per line) is the SDK's own `ReadBuffer` and `serializeMessage`.
 * @module
 * @internal
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { McpSdk } from './sdk.js';

/** How much of the server's stderr is kept, for the error shown when it crashes. */
const STDERR_TAIL_CHARS = 1_000;
/** How long `close()` waits for the server to exit after closing its stdin, then after SIGTERM, before SIGKILL. */
const EXIT_GRACE_MS = 2_000;

/** How a server process ended. @internal */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last characters the server wrote to stderr, trimmed. */
  stderrTail: string;
  /** Why the harness stopped it, when it did (not set when the server exited by itself or by another's hand). */
  reason?: string;
}

/** What starts the server. @internal */
export interface ProcessParams {
  command: string;
  args: readonly string[];
  env: Record<string, string>;
  cwd: string | undefined;
}

/** Spawns the server, frames JSON-RPC over its stdio, keeps a bounded stderr tail and records its exit. @internal */
export class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private stderr = '';
  private ended: ProcessExit | undefined;
  private reason: string | undefined;
  private readonly readBuffer: InstanceType<McpSdk['ReadBuffer']>;

  constructor(
    private readonly params: ProcessParams,
    private readonly sdk: Pick<McpSdk, 'ReadBuffer' | 'serializeMessage'>,
  ) {
    this.readBuffer = new sdk.ReadBuffer();
  }

  /** How the process ended; undefined while it runs or before it started. */
  get exit(): ProcessExit | undefined {
    return this.ended;
  }

  /** The last characters of the server's stderr so far. */
  get stderrTail(): string {
    return this.stderr.trim();
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.params.command, [...this.params.args], {
        env: this.params.env,
        cwd: this.params.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        windowsHide: true,
      });
      this.child = child;
      child.on('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      let spawned = false;
      child.once('spawn', () => {
        spawned = true;
        resolve();
      });
      child.once('close', (code, signal) => {
        // A program that could not be started is reported by its spawn error, not as an exit.
        if (spawned)
          this.ended = { code, signal, stderrTail: this.stderrTail, ...(this.reason ? { reason: this.reason } : {}) };
        this.child = undefined;
        this.onclose?.();
      });
      child.stdout?.on('data', (chunk: Buffer) => this.receive(chunk));
      child.stderr?.on('data', (chunk: Buffer) => {
        this.stderr = (this.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
      });
      // A write to a server that just died fails with EPIPE; the exit is reported through `close`.
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('error', (error) => this.onerror?.(error));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin?.writable) return Promise.reject(new Error('The MCP server process is not running.'));
    return new Promise((resolve) => {
      if (stdin.write(this.sdk.serializeMessage(message))) resolve();
      else stdin.once('drain', () => resolve());
    });
  }

  /** Asks the server to exit by closing its stdin, then SIGTERM, then SIGKILL, each after a grace period. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const waitExit = () =>
      Promise.race([exited, new Promise<void>((resolve) => setTimeout(resolve, EXIT_GRACE_MS).unref())]);
    child.stdin?.end();
    await waitExit();
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      if (child.exitCode !== null || child.signalCode !== null) break;
      child.kill(signal);
      await waitExit();
    }
    this.readBuffer.clear();
  }

  private receive(chunk: Buffer): void {
    try {
      this.readBuffer.append(chunk);
    } catch (error) {
      // One message above the SDK's 10 MB line limit: the stream cannot be resynchronised, so the server is stopped.
      this.reason = `sent a message larger than the 10 MB limit, so it was stopped`;
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      void this.close();
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.readBuffer.readMessage();
      } catch (error) {
        // A line that is not JSON-RPC (a server logging to stdout) is reported and skipped, like the SDK does.
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }
}

/** `exited with code 1`, `was killed by SIGKILL`, plus the stderr tail when there is one. @internal */
export function describeExit(exit: ProcessExit | undefined): string {
  if (!exit) return 'closed the connection';
  const how =
    exit.reason ?? (exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code ?? 'unknown'}`);
  return exit.stderrTail ? `${how}; the end of its stderr:\n${exit.stderrTail}` : `${how} (its stderr was empty)`;
}
