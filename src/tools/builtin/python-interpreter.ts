import { z } from 'zod';
import { DEFAULTS } from '../../defaults.js';
import { HarnessError } from '../../errors.js';
import { declareSecrets } from '../../util/secrets.js';
import { defineTool } from '../define-tool.js';
import type { Tool, ToolContext } from '../types.js';
import { requireApproval, type ApproveFn } from './command-policy.js';
import { recordChanges } from './execute-command.js';
import {
  DEFAULT_MAX_PROCESSES,
  sandboxStatus,
  snapshotFiles,
  type SandboxMode,
  type SandboxStatus,
} from './sandbox.js';
import { PythonSession } from './sandbox/python-session.js';
import { secretsPassedOn } from './sandbox/environment.js';
import { limitHitMessage, resourceLimitOptions } from './sandbox/resource-limits.js';
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
  /** Variables set in the session's environment (passed as given, secrets included). */
  env?: Record<string, string>;
  /**
   * Names of the harness's own environment variables to pass on, beyond the allow-list (`PATH`, `LANG`, `LC_*`, `TZ`).
   * @defaultValue []
   */
  passEnv?: string[];
  /**
   * Processes one session may run at once, where the sandbox can enforce it (see `sandbox.processLimit`).
   * @defaultValue 256
   */
  maxProcesses?: number;
  /**
   * Memory one session may use (bytes, at least 64 MiB): the interpreter and everything it starts together with a
   * memory cgroup, each process's address space with `RLIMIT_AS` (see `sandbox.memoryLimit`); `false`: no limit. A
   * cell that goes past it ends in an error observation (`resource-limit`) naming the limit.
   * @defaultValue 4 GiB
   */
  maxMemoryBytes?: number | false;
  /**
   * Bytes the sandbox's private `/tmp` and `/dev/shm` may each hold (at least 1 MiB), where bubblewrap can cap them
   * (see `sandbox.tmpLimit`); `false`: no cap. A cell that fails for lack of space there ends in an error
   * observation (`resource-limit`) naming the limit.
   * @defaultValue 1 GiB
   */
  maxTmpBytes?: number | false;
}

const OptionsSchema = z.strictObject({
  python: z.string().min(1).default('python3'),
  timeoutMs: z.number().int().min(100).max(86_400_000).default(DEFAULTS.toolTimeoutMs),
  sandbox: z.enum(['auto', 'bwrap', 'none']).default('auto'),
  bwrapPath: z.string().min(1).default('bwrap'),
  allowNetwork: z.boolean().default(false),
  approve: z.custom<ApproveFn>((value) => typeof value === 'function', 'must be a function').optional(),
  maxOutputChars: z.number().int().min(200).max(10_000_000).default(20_000),
  env: z.record(z.string(), z.string()).default({}),
  passEnv: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be environment variable names')).default([]),
  maxProcesses: z.number().int().min(16).max(100_000).default(DEFAULT_MAX_PROCESSES),
  ...resourceLimitOptions,
});

const PythonInput = z.object({
  code: z
    .string()
    .default('')
    .describe('Python code to run. The value of a final expression is shown, like in a notebook.'),
  reset: z.boolean().optional().describe('Start a fresh session (all variables are lost) before running the code.'),
});

/** Throws `HarnessError('tool-unavailable')` unless `python` runs and is Python 3. */
/** Where the interpreter lives: its executable and installation prefixes (bound read-only into the sandbox). */
interface PythonInstall {
  executable: string;
  prefixes: string[];
}

const PROBE = 'import json, sys; print(json.dumps([sys.version_info[0], sys.executable, sys.prefix, sys.base_prefix]))';

/** Finds `python` and returns where it lives; throws `HarnessError('tool-unavailable')` unless it runs and is Python 3. */
function checkPython(python: string): PythonInstall {
  // node:child_process on first use rather than with the package.
  const probe = process.getBuiltinModule('node:child_process').spawnSync(python, ['-c', PROBE], {
    encoding: 'utf8',
    timeout: 15_000,
  });
  let facts: unknown;
  try {
    facts = JSON.parse(probe.stdout);
  } catch {
    facts = undefined;
  }
  const [major, executable, prefix, basePrefix] = Array.isArray(facts) ? (facts as unknown[]) : [];
  if (probe.error || probe.status !== 0 || major !== 3 || typeof executable !== 'string' || !executable) {
    const why = probe.error
      ? probe.error.message
      : probe.status !== 0
        ? `exit status ${String(probe.status)}`
        : `it is Python ${String(major ?? probe.stdout.trim())}`;
    throw new HarnessError(
      'tool-unavailable',
      `python_interpreter needs Python 3, but "${python}" cannot be used (${why}). Install it (Debian/Ubuntu: apt-get install python3; ` +
        'macOS: brew install python), pass its path as option "python", or leave the python_interpreter tool out.',
    );
  }
  const prefixes = [prefix, basePrefix].filter(
    (dir): dir is string => typeof dir === 'string' && dir !== '' && !isSystemDir(dir),
  );
  return { executable, prefixes: [...new Set(prefixes)] };
}

/** True for directories the sandbox shows anyway. */
function isSystemDir(dir: string): boolean {
  return ['/usr', '/bin', '/lib', '/lib64', '/sbin'].some((system) => dir === system || dir.startsWith(`${system}/`));
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
  const install = checkPython(opts.python);
  const status = sandboxStatus(opts.sandbox, opts.bwrapPath);
  // Keyed by the loop's own identity object, never by runId (callers choose runIds and may reuse them at once).
  const sessions = new WeakMap<object, PythonSession>();

  const session = (ctx: ToolContext, reset: boolean): PythonSession => {
    const key = ctx.scopeKey ?? ctx;
    let current = sessions.get(key);
    if (current && (reset || !current.alive)) {
      current.kill();
      current = undefined;
    }
    if (!current) {
      const created = new PythonSession(install.executable, {
        workspaceRoot: ctx.workspace.root,
        sandbox: status,
        allowNetwork: opts.allowNetwork,
        passEnv: opts.passEnv,
        env: { MPLBACKEND: 'Agg', PYTHONDONTWRITEBYTECODE: '1', PYTHONIOENCODING: 'utf-8', ...opts.env },
        readOnlyPaths: install.prefixes,
        maxProcesses: opts.maxProcesses,
        maxMemoryBytes: opts.maxMemoryBytes,
        maxTmpBytes: opts.maxTmpBytes,
      });
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
          {
            tool: 'python_interpreter',
            command: code,
            reason: `no sandbox: ${status.reason}`,
            parts: [],
            sandboxed: false,
            cwd: ctx.workspace.root,
            runId: ctx.runId,
            scope: ctx.scope,
          },
          opts.approve,
        );
      }
      const python = session(ctx, reset === true);
      if (code.trim() === '')
        return reset ? 'The Python session was reset; all variables are cleared.' : 'No code given.';
      const before = await snapshotFiles(ctx.workspace.root);
      const oomKillsBefore = await python.oomKills();
      const reply = await python.run(code, opts.timeoutMs, ctx.signal, opts.maxOutputChars);
      const files = await recordChanges(ctx, 'python_interpreter', before);
      const lines: string[] = [];
      if (reset) lines.push('(fresh session)');
      if (reply.stdout.replace(/\n$/, '')) lines.push('--- stdout ---', reply.stdout.replace(/\n$/, ''));
      if (reply.stderr.replace(/\n$/, '')) lines.push('--- stderr ---', reply.stderr.replace(/\n$/, ''));
      if (reply.error) lines.push('--- error ---', reply.error.replace(/\n$/, ''));
      if (reply.result !== null) lines.push('--- result ---', reply.result);
      if (reply.ended === 'timeout') {
        lines.push(
          `Timed out after ${opts.timeoutMs} ms; the Python session was killed and the next call starts a fresh one (variables are lost).`,
        );
      } else if (reply.ended === 'aborted') {
        lines.push('Aborted; the Python session was killed (variables are lost).');
      } else if (reply.ended === 'exited') {
        lines.push(
          `The Python process exited (code ${String(reply.exitCode)}); the next call starts a fresh session (variables are lost).`,
        );
      } else if (reply.ended === 'protocol') {
        lines.push(
          `The Python session was ended: it sent ${reply.protocolError ?? 'an invalid message'} on the harness's result channel. ` +
            'The next call starts a fresh session (variables are lost).',
        );
      }
      if (lines.length === 0 || (lines.length === 1 && reset)) lines.push('(no output)');
      if (files.length > 0) lines.push(`Files created or changed: ${files.join(', ')}`);
      const limitHit = await limitHitMessage(
        python.limits,
        (await python.oomKills()) - oomKillsBefore,
        `${reply.stderr}\n${reply.error ?? ''}`,
        { tool: 'python_interpreter', factory: 'pythonInterpreterTool', workspaceRoot: ctx.workspace.root },
      );
      if (limitHit) throw new HarnessError('resource-limit', `${limitHit}\n\n${lines.join('\n')}`);
      return { text: lines.join('\n'), files };
    },
  });
  const finished = Object.freeze({ ...tool, sandbox: status, warnings: status.warning ? [status.warning] : [] });
  declareSecrets(finished, () => secretsPassedOn(opts), 'value');
  return finished;
}
