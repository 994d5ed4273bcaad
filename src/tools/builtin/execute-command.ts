import { z } from 'zod';
import type { ChildProcess } from 'node:child_process';
import { DEFAULTS } from '../../defaults.js';
import { HarnessError } from '../../errors.js';
import { declareSecrets } from '../../util/secrets.js';
import { defineTool } from '../define-tool.js';
import type { Tool, ToolContext } from '../types.js';
import { secretsPassedOn } from './sandbox/environment.js';
import { OutputCapture } from './sandbox/output-capture.js';
import { limitHitMessage, resourceLimitOptions } from './sandbox/resource-limits.js';
import { CommandPolicy, requireApproval, type ApproveFn, type CommandPolicyOptions } from './command-policy.js';
import {
  changedFiles,
  DEFAULT_MAX_PROCESSES,
  killProcessTree,
  sandboxStatus,
  snapshotFiles,
  spawnInWorkspace,
  type SandboxMode,
  type SandboxStatus,
  type WorkspaceAccess,
  type WorkspaceProcess,
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
  /**
   * `read-only`: commands see the workspace mounted read-only, without the harness's `.harness/` folder and without
   * network, so the tool never changes anything and is marked `readOnly` (managed mode's auditor gets one). It needs
   * bubblewrap: `sandbox: 'none'`, and `'auto'` or `'bwrap'` where bubblewrap is unusable, throw; so does a policy
   * with `allowNetwork`.
   * @defaultValue 'read-write'
   */
  workspaceAccess?: WorkspaceAccess;
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
  /** Variables set in the command's environment (passed as given, secrets included). */
  env?: Record<string, string>;
  /**
   * Names of the harness's own environment variables to pass on, beyond the allow-list (`PATH`, `LANG`, `LC_*`, `TZ`).
   * @defaultValue []
   */
  passEnv?: string[];
  /**
   * Processes one command may run at once, where the sandbox can enforce it (see `sandbox.processLimit`).
   * @defaultValue 256
   */
  maxProcesses?: number;
  /**
   * Memory one command may use (bytes, at least 64 MiB): all its processes together with a memory cgroup, each
   * process's address space with `RLIMIT_AS` (see `sandbox.memoryLimit`); `false`: no limit. A command that goes past
   * it ends in an error observation (`resource-limit`) naming the limit.
   * @defaultValue 4 GiB
   */
  maxMemoryBytes?: number | false;
  /**
   * Bytes the sandbox's private `/tmp` and `/dev/shm` may each hold (at least 1 MiB), where bubblewrap can cap them
   * (see `sandbox.tmpLimit`); `false`: no cap. A command that fails for lack of space there ends in an error
   * observation (`resource-limit`) naming the limit.
   * @defaultValue 1 GiB
   */
  maxTmpBytes?: number | false;
}

const OptionsSchema = z.strictObject({
  policy: z.union([z.instanceof(CommandPolicy), z.record(z.string(), z.unknown())]).optional(),
  approve: z.custom<ApproveFn>((value) => typeof value === 'function', 'must be a function').optional(),
  sandbox: z.enum(['auto', 'bwrap', 'none']).default('auto'),
  workspaceAccess: z.enum(['read-write', 'read-only']).default('read-write'),
  bwrapPath: z.string().min(1).default('bwrap'),
  timeoutMs: z.number().int().min(100).max(86_400_000).default(DEFAULTS.toolTimeoutMs),
  maxOutputChars: z.number().int().min(200).max(10_000_000).default(20_000),
  shell: z.string().min(1).default('/bin/bash'),
  env: z.record(z.string(), z.string()).default({}),
  passEnv: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be environment variable names')).default([]),
  maxProcesses: z.number().int().min(16).max(100_000).default(DEFAULT_MAX_PROCESSES),
  ...resourceLimitOptions,
});

const CommandInput = z.object({
  command: z.string().trim().min(1).describe('The shell command line to run (bash).'),
  cwd: z
    .string()
    .trim()
    .min(1)
    .optional()
    .describe('Working directory relative to the workspace root (default: the root).'),
});

export { OutputCapture } from './sandbox/output-capture.js';

/** How a child process ended. @internal */
export interface ProcessOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
}

/**
 * Waits for a command to end, killing everything it started on timeout or abort, and any leftovers (background jobs,
 * `setsid` daemons) once its direct child exits; then releases its containment. @internal
 */
export async function waitForProcess(
  target: ChildProcess | WorkspaceProcess,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<ProcessOutcome> {
  const proc: WorkspaceProcess =
    'dispose' in target
      ? target
      : {
          child: target,
          token: '',
          limits: {},
          oomKills: async () => 0,
          kill: () => killProcessTree(target),
          dispose: async () => undefined,
        };
  const { child } = proc;
  const outcome = await new Promise<ProcessOutcome>((resolve) => {
    let timedOut = false;
    let aborted = false;
    const onAbort = (): void => {
      aborted = true;
      proc.kill();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      proc.kill();
    }, timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    // Background jobs keep the pipes open after the shell exits; they end with it.
    child.once('exit', () => proc.kill());
    child.once('error', () => undefined);
    child.once('close', (exitCode, exitSignal) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve({ exitCode, signal: exitSignal, timedOut, aborted });
    });
  });
  await proc.dispose();
  return outcome;
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
  /** How commands see the workspace. */
  readonly workspaceAccess: WorkspaceAccess;
};

/** The sandbox of a read-only tool: bubblewrap, without network, or a `HarnessError` saying why not. */
function readOnlySandbox(mode: SandboxMode, bwrapPath: string, policy: CommandPolicy): SandboxStatus {
  if (mode === 'none' || policy.allowNetwork) {
    throw new HarnessError(
      'invalid-options',
      `executeCommandTool: workspaceAccess 'read-only' needs the bubblewrap sandbox without network (got ${
        mode === 'none' ? "sandbox: 'none'" : 'a policy with allowNetwork'
      }); a command outside it could change the workspace or the outside world.`,
    );
  }
  try {
    return sandboxStatus('bwrap', bwrapPath);
  } catch (error) {
    throw new HarnessError(
      'tool-unavailable',
      `executeCommandTool: workspaceAccess 'read-only' needs the bubblewrap sandbox to mount the workspace read-only. ${
        error instanceof Error ? error.message : String(error)
      }`,
      { cause: error },
    );
  }
}

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
  const policy =
    opts.policy instanceof CommandPolicy
      ? opts.policy
      : new CommandPolicy(opts.policy as CommandPolicyOptions | undefined);
  const readOnly = opts.workspaceAccess === 'read-only';
  const status = readOnly
    ? readOnlySandbox(opts.sandbox, opts.bwrapPath, policy)
    : sandboxStatus(opts.sandbox, opts.bwrapPath);
  const tool = defineTool({
    name: 'execute_command',
    description:
      'Run a bash command line in the workspace (the working directory is the workspace root). Returns exit code, ' +
      'stdout and stderr. Commands are checked against a policy; some need approval or are refused.' +
      (readOnly
        ? ' The workspace is mounted read-only: a command that writes to it fails. There is no network access.'
        : status.active
          ? policy.allowNetwork
            ? ''
            : ' There is no network access.'
          : ''),
    input: CommandInput,
    readOnly,
    observation: 'text',
    timeoutMs: opts.timeoutMs + 10_000,
    async execute({ command, cwd }, ctx) {
      const workDir = cwd === undefined ? ctx.workspace.root : await ctx.workspace.resolve(cwd, 'read');
      const evaluation = policy.evaluate(command);
      if (evaluation.decision === 'deny') {
        throw new HarnessError(
          'policy-denied',
          `The command policy denies this command (${evaluation.reason}); it was not run.`,
        );
      }
      if (evaluation.decision === 'ask' || status.requiresApproval) {
        const reason = evaluation.decision === 'ask' ? evaluation.reason : `no sandbox: ${status.reason}`;
        await requireApproval(
          {
            tool: 'execute_command',
            command,
            reason,
            parts: evaluation.parts,
            sandboxed: status.active,
            cwd: workDir,
            runId: ctx.runId,
            scope: ctx.scope,
          },
          opts.approve,
        );
      }
      // A read-only workspace cannot change: no need to look for changed files.
      const before = readOnly ? undefined : await snapshotFiles(ctx.workspace.root);
      const proc = spawnInWorkspace(opts.shell, ['-c', command], {
        workspaceRoot: ctx.workspace.root,
        workspaceAccess: opts.workspaceAccess,
        cwd: workDir,
        sandbox: status,
        allowNetwork: policy.allowNetwork,
        passEnv: opts.passEnv,
        env: opts.env,
        maxProcesses: opts.maxProcesses,
        maxMemoryBytes: opts.maxMemoryBytes,
        maxTmpBytes: opts.maxTmpBytes,
      });
      const { child } = proc;
      const stdout = new OutputCapture(opts.maxOutputChars);
      const stderr = new OutputCapture(opts.maxOutputChars);
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => stdout.push(chunk));
      child.stderr?.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
      const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
      const outcome = await Promise.race([waitForProcess(proc, opts.timeoutMs, ctx.signal), spawnError]);
      if (outcome instanceof Error) {
        await proc.dispose();
        throw new HarnessError(
          'tool-unavailable',
          `execute_command could not start ${opts.shell}: ${outcome.message}.`,
          { cause: outcome },
        );
      }
      const files = before ? await recordChanges(ctx, 'execute_command', before) : [];
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
      const limitHit = await limitHitMessage(proc.limits, await proc.oomKills(), err, {
        tool: 'execute_command',
        factory: 'executeCommandTool',
        workspaceRoot: ctx.workspace.root,
      });
      if (limitHit) throw new HarnessError('resource-limit', `${limitHit}\n\n${lines.join('\n')}`);
      return { text: lines.join('\n'), files };
    },
  });
  const finished = Object.freeze({
    ...tool,
    execute: tool.execute,
    sandbox: status,
    policy,
    workspaceAccess: opts.workspaceAccess,
    warnings: status.warning ? [status.warning] : [],
  });
  declareSecrets(finished, () => secretsPassedOn(opts), 'value');
  return finished;
}
