/**
 * `commandAgent`: an external agent CLI (Codex CLI, Claude Code, any program) as an {@link AgentAdapter}.
 * @module
 */
import { constants } from 'node:fs';
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { HarnessError } from '../../errors.js';
import { OutputCapture, waitForProcess } from '../../tools/builtin/execute-command.js';
import { sandboxStatus, spawnInWorkspace, type SandboxStatus } from '../../tools/builtin/sandbox.js';
import type { AgentAdapter, EpisodeInput, EpisodeResult } from '../../contracts/agent-adapter.js';
import { MANAGED_DEFAULTS } from '../shared/managed-options.js';
import { groupRuns } from '../../util/process-group.js';
import { memoryLimitKind } from '../../tools/builtin/sandbox/containment.js';

const MAX_TIMER_MS = 2_147_483_647;
/** How often a killed process group is checked for its last process. */
const REAP_POLL_MS = 25;

/**
 * The variables an agent CLI inherits from the harness's environment; everything else (API keys, tokens, cloud
 * credentials) stays out unless `env` passes it explicitly.
 */
export const AGENT_ENV_ALLOWLIST: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'LC_MESSAGES',
  'TERM',
  'TZ',
  'TMPDIR',
];

const OptionsSchema = z.strictObject({
  command: z.array(z.string().min(1)).min(1, 'must name the program and its arguments, e.g. ["codex", "exec", "-"]'),
  promptVia: z.enum(['arg', 'stdin', 'file']),
  env: z.record(z.string(), z.string()).default({}),
  timeoutMs: z.number().int().positive().max(MAX_TIMER_MS).optional(),
  outputLimit: z.number().int().min(1_000).default(MANAGED_DEFAULTS.agentOutputLimit),
  name: z.string().trim().min(1).optional(),
  sandbox: z.boolean().default(true),
  network: z.boolean().default(true),
  readOnlyPaths: z.array(z.string().refine((p) => path.isAbsolute(p), 'must be an absolute path')).default([]),
});

/** Options of {@link commandAgent}. */
export interface CommandAgentOptions {
  /** The program and its arguments; `{prompt}` / `{promptFile}` in an argument is replaced (see `promptVia`). */
  command: string[];
  /**
   * How the prompt reaches the program: `arg` replaces `{prompt}` in an argument (or is appended as the last one);
   * `stdin` writes it to standard input and closes it; `file` writes it to a temporary file outside the workspace and
   * replaces `{promptFile}` with its path (or appends the path), also set as `HARNESS_PROMPT_FILE`. Long prompts
   * belong in `stdin` or `file`: one argument is limited to 128 KiB on Linux.
   */
  promptVia: 'arg' | 'stdin' | 'file';
  /** Variables added to the allow-listed environment ({@link AGENT_ENV_ALLOWLIST}), secrets included, as given. */
  env?: Record<string, string>;
  /** Longest episode; the run's time left applies when it is shorter. */
  timeoutMs?: number;
  /** Characters of stdout and of stderr kept (head and tail). @defaultValue 200 000 */
  outputLimit?: number;
  /** The adapter's name in prompts and reports. @defaultValue the program's base name */
  name?: string;
  /**
   * Runs the program inside the bubblewrap sandbox where it works: the workspace read-write, its `.harness/` folder
   * read-only, the system directories read-only, nothing else of the host (no home directory: `HOME` and `TMPDIR` are
   * the sandbox's private `/tmp`), its own process and PID namespace. Where bubblewrap is missing or unusable the
   * program runs on the host and the adapter's `warnings` (shown in `run-start`) say so. `false` opts out.
   * @defaultValue true
   */
  sandbox?: boolean;
  /** Whether the sandboxed program may use the network (agent CLIs call their model's API). @defaultValue true */
  network?: boolean;
  /**
   * Host paths the sandboxed program sees read-only at the same path: its installation when it lies outside the
   * system directories (`~/.nvm`, `~/.local`), a configuration folder. Missing paths are skipped.
   */
  readOnlyPaths?: string[];
}

/**
 * Runs an agent CLI for each episode, with the workspace as working directory, inside the harness's sandbox by default
 * (see {@link CommandAgentOptions.sandbox}). Everything the program starts is ended with it: on timeout, on abort and
 * when the program exits, its process group, every process in its pids cgroup (where one can be made) and every
 * process carrying its per-episode token (`HORIZON_HARNESS_PROCESS_TOKEN`, which `setsid` daemons inherit) are
 * killed, and inside the sandbox its PID namespace ends with it; the episode returns only once they are gone, so
 * nothing it started runs on during the audit. The environment is {@link AGENT_ENV_ALLOWLIST} plus `env` plus the
 * episode's variables; output is captured head and tail, stdout first and stderr after a `--- stderr ---` line. Exit
 * code 0 is `done`, any other ending `error`.
 *
 * @example
 * ```ts
 * const codex = commandAgent({
 *   command: ['codex', 'exec', '--sandbox', 'workspace-write', '--skip-git-repo-check', '-'],
 *   promptVia: 'stdin',
 *   env: { OPENAI_API_KEY: process.env.OPENAI_API_KEY ?? '' },
 * });
 * ```
 */
export function commandAgent(options: CommandAgentOptions): AgentAdapter {
  const parsed = OptionsSchema.safeParse(options ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new HarnessError(
      'invalid-options',
      `Invalid commandAgent option "${issue?.path.join('.') || 'options'}": ${issue?.message ?? 'invalid'}. ` +
        "command is a non-empty string array, promptVia 'arg' | 'stdin' | 'file', timeoutMs a positive integer, outputLimit ≥ 1000.",
    );
  }
  const o = parsed.data;
  const program = o.command[0] as string;
  const sandbox = sandboxStatus(o.sandbox ? 'auto' : 'none');
  const name = o.name ?? path.basename(program);
  return Object.freeze({
    name,
    warnings: Object.freeze(sandboxWarnings(name, sandbox)),
    runEpisode: (input: EpisodeInput) => runCommand(o, sandbox, input),
  });
}

/** What the host should know about where the program runs. */
function sandboxWarnings(name: string, sandbox: SandboxStatus): string[] {
  if (sandbox.mode === 'none') {
    return [
      `${name}: commandAgent runs on the host (sandbox: false): it can write the harness's .harness/ folder (a change there during a round is an integrity violation) and everything its user can.`,
    ];
  }
  if (!sandbox.active) {
    return [
      `${name}: commandAgent runs on the host, not in the sandbox: ${sandbox.reason}. Install bubblewrap, or pass sandbox: false to opt out explicitly.`,
    ];
  }
  return [];
}

type Resolved = z.output<typeof OptionsSchema>;

async function runCommand(o: Resolved, sandbox: SandboxStatus, input: EpisodeInput): Promise<EpisodeResult> {
  if (input.signal.aborted) return { status: 'cancelled', output: 'The episode was not started: the run had stopped.' };
  const promptDir = o.promptVia === 'file' ? await mkdtemp(path.join(tmpdir(), 'horizon-prompt-')) : undefined;
  try {
    const promptFile = promptDir ? path.join(promptDir, 'prompt.md') : undefined;
    if (promptFile) await writeFile(promptFile, input.prompt, { mode: 0o600 });
    const [program, ...args] = argv(o, input.prompt, promptFile);
    const env: Record<string, string> = {
      ...allowListed(process.env),
      // The host's home and temporary folders are not in the sandbox; its private /tmp is.
      ...(sandbox.active ? { HOME: '/tmp', TMPDIR: '/tmp' } : {}),
      ...o.env,
      ...input.env,
      ...(promptFile ? { HARNESS_PROMPT_FILE: promptFile } : {}),
    };
    const missing = await unrunnable(program as string, input.cwd, env.PATH);
    if (missing) return { status: 'error', output: `Could not start "${program}": ${missing}` };
    let proc: ReturnType<typeof spawnInWorkspace>;
    try {
      proc = spawnInWorkspace(program as string, args, {
        workspaceRoot: input.cwd,
        sandbox,
        allowNetwork: o.network,
        env,
        readOnlyPaths: [...o.readOnlyPaths, ...(promptDir ? [promptDir] : [])],
        // A memory cgroup bounds what the agent's processes use together. RLIMIT_AS, the fallback elsewhere, bounds
        // each process's address space instead, and V8 reserves far more than it uses (a WebAssembly.Memory cannot
        // be made under 4 GiB): an agent CLI on Node would fail, so it gets the cgroup's limit or none.
        ...(memoryLimitKind(sandbox.active) === 'cgroup' ? {} : { maxMemoryBytes: false as const }),
        stdio: [o.promptVia === 'stdin' ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      });
    } catch (error) {
      return { status: 'error', output: `Could not start "${program}": ${(error as Error).message}` };
    }
    const { child } = proc;
    const stdout = new OutputCapture(o.outputLimit);
    const stderr = new OutputCapture(o.outputLimit);
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => stdout.push(chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
    // A program that exits without reading its input closes the pipe; that is its choice, not an error of the episode.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input.prompt);
    const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
    const timeoutMs = Math.max(1, Math.min(o.timeoutMs ?? MAX_TIMER_MS, input.timeoutMs, MAX_TIMER_MS));
    // Kills what the program left running once it exits, and waits for the kill to be complete.
    const outcome = await Promise.race([waitForProcess(proc, timeoutMs, input.signal), spawnError]);
    if (outcome instanceof Error) {
      await proc.dispose();
      return { status: 'error', output: `Could not start "${program}": ${outcome.message}` };
    }
    if (child.pid !== undefined) await groupGone(child.pid);
    const err = stderr.toString();
    const output = err ? `${stdout.toString()}\n--- stderr ---\n${err}` : stdout.toString();
    const exitCode = outcome.exitCode ?? undefined;
    const status = outcome.timedOut
      ? 'timeout'
      : outcome.aborted
        ? 'cancelled'
        : outcome.exitCode === 0
          ? 'done'
          : 'error';
    return { status, output, ...(exitCode === undefined ? {} : { exitCode }) };
  } finally {
    if (promptDir) await rm(promptDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/**
 * Why `program` cannot be run, or undefined when it can: checked on the host before the start, since inside the
 * sandbox (or behind the cgroup's shell) a missing program would only show as the wrapper's exit status.
 */
async function unrunnable(program: string, cwd: string, searchPath: string | undefined): Promise<string | undefined> {
  const candidates = program.includes('/')
    ? [path.resolve(cwd, program)]
    : (searchPath ?? '').split(':').flatMap((dir) => (dir ? [path.join(dir, program)] : []));
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      return undefined;
    } catch {
      // Not here, or not executable.
    }
  }
  return program.includes('/') ? 'no executable file at that path' : 'not found on PATH';
}

/** The command line with the prompt (or its file) in the `{prompt}` / `{promptFile}` slot, else appended. */
function argv(o: Resolved, prompt: string, promptFile: string | undefined): string[] {
  if (o.promptVia === 'stdin') return [...o.command];
  const [slot, value] = o.promptVia === 'arg' ? ['{prompt}', prompt] : ['{promptFile}', promptFile as string];
  const filled = o.command.map((part) => part.split(slot).join(value));
  return o.command.some((part) => part.includes(slot)) ? filled : [...filled, value];
}

function allowListed(env: NodeJS.ProcessEnv): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of AGENT_ENV_ALLOWLIST) {
    const value = env[name];
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}

/**
 * Waits until no process of the group runs: killed processes take a moment to die, and the episode returns only once
 * they have (zombies waiting for a parent to reap them run nothing; see {@link groupRuns}).
 */
async function groupGone(pgid: number): Promise<void> {
  const deadline = performance.now() + MANAGED_DEFAULTS.reapWaitMs;
  while (groupRuns(pgid) && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, REAP_POLL_MS));
  }
}
