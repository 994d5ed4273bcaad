import { z } from 'zod';
import type { ChildProcess } from 'node:child_process';
import { DEFAULTS } from '../../defaults.js';
import { HarnessError } from '../../errors.js';
import { defineTool } from '../define-tool.js';
import type { Tool, ToolContext } from '../types.js';
import { CommandPolicy, requireApproval, type ApproveFn, type CommandPolicyOptions } from './command-policy.js';
import {
  changedFiles,
  killProcessTree,
  sandboxStatus,
  scrubEnv,
  snapshotFiles,
  spawnInWorkspace,
  type SandboxMode,
  type SandboxStatus,
} from './sandbox.js';
import { parseOptions } from './search-providers/http.js';

/** Options of {@link executeCommandTool}. */
export interface ExecuteCommandToolOptions {
  /** A policy, or the options to build one (default: `DEFAULT_COMMAND_RULES`, unmatched commands ask). */
  policy?: CommandPolicy | CommandPolicyOptions;
  /** Decides `ask` commands; without it they are refused with an observation. */
  approve?: ApproveFn;
  /** @defaultValue 'auto' */
  sandbox?: SandboxMode;
  /** @defaultValue 'bwrap' */
  bwrapPath?: string;
  /**
   * Per-command timeout; the process group is killed when it passes.
   * @defaultValue 120000
   */
  timeoutMs?: number;
  /**
   * Characters of stdout and of stderr kept (head and tail) per command.
   * @defaultValue 20000
   */
  maxOutputChars?: number;
  /** @defaultValue '/bin/bash' */
  shell?: string;
  /** Variables added to the scrubbed environment (they are passed as given, secrets included). */
  env?: Record<string, string>;
}

const OptionsSchema = z.object({
  policy: z.union([z.instanceof(CommandPolicy), z.record(z.string(), z.unknown())]).optional(),
  approve: z.custom<ApproveFn>((value) => typeof value === 'function', 'must be a function').optional(),
  sandbox: z.enum(['auto', 'bwrap', 'none']).default('auto'),
  bwrapPath: z.string().min(1).default('bwrap'),
  timeoutMs: z.number().int().min(100).max(86_400_000).default(DEFAULTS.toolTimeoutMs),
  maxOutputChars: z.number().int().min(200).max(10_000_000).default(20_000),
  shell: z.string().min(1).default('/bin/bash'),
  env: z.record(z.string(), z.string()).default({}),
});

const CommandInput = z.object({
  command: z.string().trim().min(1).describe('The shell command line to run (bash).'),
  cwd: z.string().trim().min(1).optional().describe('Working directory relative to the workspace root (default: the root).'),
});

/** Keeps the first and last `max / 2` characters of a stream and counts what was dropped between. @internal */
export class OutputCapture {
  private head = '';
  private tail = '';
  private dropped = 0;
  constructor(private readonly max: number) {}

  push(chunk: string): void {
    const half = Math.floor(this.max / 2);
    if (this.head.length < half) {
      const room = half - this.head.length;
      this.head += chunk.slice(0, room);
      chunk = chunk.slice(room);
    }
    if (chunk === '') return;
    this.tail += chunk;
    if (this.tail.length > half) {
      this.dropped += this.tail.length - half;
      this.tail = this.tail.slice(this.tail.length - half);
    }
  }

  toString(): string {
    return this.dropped > 0 ? `${this.head}\n[… ${this.dropped} characters omitted …]\n${this.tail}` : this.head + this.tail;
  }
}

/** How a child process ended. @internal */
export interface ProcessOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
}

/** Waits for a child to end, killing its process group on timeout or abort, and any leftovers once it exits. @internal */
export function waitForProcess(child: ChildProcess, timeoutMs: number, signal: AbortSignal): Promise<ProcessOutcome> {
  return new Promise((resolve) => {
    let timedOut = false;
    let aborted = false;
    const onAbort = (): void => {
      aborted = true;
      killProcessTree(child);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killProcessTree(child);
    }, timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    // Background jobs keep the pipes open after the shell exits; they end with it.
    child.once('exit', () => killProcessTree(child));
    child.once('error', () => undefined);
    child.once('close', (exitCode, exitSignal) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve({ exitCode, signal: exitSignal, timedOut, aborted });
    });
  });
}

/** Records the files a process created or changed since `before` as artifacts of `tool`; returns their paths. @internal */
export async function recordChanges(ctx: ToolContext, tool: string, before: Map<string, string>): Promise<string[]> {
  const changed = changedFiles(before, await snapshotFiles(ctx.workspace.root));
  const recorded: string[] = [];
  for (const file of changed) {
    try {
      if (await ctx.workspace.recordArtifact(file, { tool, scope: ctx.scope })) recorded.push(file);
    } catch {
      // A file the workspace refuses (e.g. reached through a symlink) is not an artifact.
    }
  }
  return recorded;
}

/** `executeCommandTool()`'s tool, with the sandbox status the harness reports. */
export type ExecuteCommandTool = Tool<z.output<typeof CommandInput>> & {
  /** Whether commands run in bwrap; `warning` belongs in the run's `run-start` warnings. */
  readonly sandbox: SandboxStatus;
  readonly policy: CommandPolicy;
};

/**
 * The paper's `execute_command` tool: runs a bash command line in the workspace under a {@link CommandPolicy}
 * (allow / ask / deny; `ask` goes to `approve`), inside bubblewrap when available, with a timeout, capped output and
 * the whole process group killed on timeout or abort. Files the command creates or changes are recorded as artifacts.
 * Throws `HarnessError('tool-unavailable')` when `sandbox: 'bwrap'` is required but unusable.
 *
 * @example
 * ```ts
 * const shell = executeCommandTool({
 *   policy: { rules: [...DEFAULT_COMMAND_RULES, { match: 'python3', decision: 'allow' }] },
 *   approve: async (request) => askTheUser(request.command),
 * });
 * if (shell.sandbox.warning) console.warn(shell.sandbox.warning);
 * ```
 */
export function executeCommandTool(options: ExecuteCommandToolOptions = {}): ExecuteCommandTool {
  const opts = parseOptions(OptionsSchema, options, 'executeCommandTool');
  const policy = opts.policy instanceof CommandPolicy ? opts.policy : new CommandPolicy(opts.policy as CommandPolicyOptions | undefined);
  const status = sandboxStatus(opts.sandbox, opts.bwrapPath);
  const tool = defineTool({
    name: 'execute_command',
    description:
      'Run a bash command line in the workspace (the working directory is the workspace root). Returns exit code, ' +
      'stdout and stderr. Commands are checked against a policy; some need approval or are refused.' +
      (status.active ? (policy.allowNetwork ? '' : ' There is no network access.') : ''),
    input: CommandInput,
    readOnly: false,
    observation: 'text',
    timeoutMs: opts.timeoutMs + 10_000,
    async execute({ command, cwd }, ctx) {
      const workDir = cwd === undefined ? ctx.workspace.root : await ctx.workspace.resolve(cwd, 'read');
      const evaluation = policy.evaluate(command);
      if (evaluation.decision === 'deny') {
        throw new HarnessError('policy-denied', `The command policy denies this command (${evaluation.reason}); it was not run.`);
      }
      if (evaluation.decision === 'ask' || status.requiresApproval) {
        const reason = evaluation.decision === 'ask' ? evaluation.reason : `no sandbox: ${status.reason}`;
        await requireApproval(
          { tool: 'execute_command', command, reason, parts: evaluation.parts, sandboxed: status.active, cwd: workDir, runId: ctx.runId, scope: ctx.scope },
          opts.approve,
        );
      }
      const before = await snapshotFiles(ctx.workspace.root);
      const child = spawnInWorkspace(opts.shell, ['-c', command], {
        workspaceRoot: ctx.workspace.root,
        cwd: workDir,
        sandbox: status,
        allowNetwork: policy.allowNetwork,
        env: { ...scrubEnv(), ...opts.env },
      });
      const stdout = new OutputCapture(opts.maxOutputChars);
      const stderr = new OutputCapture(opts.maxOutputChars);
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => stdout.push(chunk));
      child.stderr?.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
      const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
      const outcome = await Promise.race([waitForProcess(child, opts.timeoutMs, ctx.signal), spawnError]);
      if (outcome instanceof Error) {
        throw new HarnessError('tool-unavailable', `execute_command could not start ${opts.shell}: ${outcome.message}.`, { cause: outcome });
      }
      const files = await recordChanges(ctx, 'execute_command', before);
      const summary = outcome.timedOut
        ? `Timed out after ${opts.timeoutMs} ms; the command and everything it started were killed.`
        : outcome.aborted
          ? 'Aborted; the command and everything it started were killed.'
          : outcome.exitCode !== null
            ? `Exit code: ${outcome.exitCode}`
            : `Killed by signal ${outcome.signal ?? 'unknown'}`;
      const lines = [`$ ${command}`, summary];
      const out = stdout.toString();
      const err = stderr.toString();
      if (out) lines.push('--- stdout ---', out.replace(/\n$/, ''));
      if (err) lines.push('--- stderr ---', err.replace(/\n$/, ''));
      if (!out && !err) lines.push('(no output)');
      if (files.length > 0) lines.push(`Files created or changed: ${files.join(', ')}`);
      return { text: lines.join('\n'), files };
    },
  });
  return Object.freeze({ ...tool, execute: tool.execute, sandbox: status, policy, warnings: status.warning ? [status.warning] : [] });
}
