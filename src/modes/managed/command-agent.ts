/**
 * `commandAgent`: an external agent CLI (Codex CLI, Claude Code, any program) as an {@link AgentAdapter}.
 * @module
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { HarnessError } from '../../errors.js';
import { OutputCapture, waitForProcess } from '../../tools/builtin/execute-command.js';
import type { AgentAdapter, EpisodeInput, EpisodeResult } from '../../contracts/agent-adapter.js';
import { MANAGED_DEFAULTS } from '../shared/managed-options.js';

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
}

/**
 * Runs an agent CLI for each episode, with the workspace as working directory. The program is the leader of its own
 * process group: on timeout or abort the whole group is killed (also what it left running when it exits), and the
 * episode returns only once the group's last process is gone or {@link MANAGED_DEFAULTS.reapWaitMs} has passed. The
 * environment is {@link AGENT_ENV_ALLOWLIST} plus `env` plus the episode's variables; output is captured head and
 * tail, stdout first and stderr after a `--- stderr ---` line. Exit code 0 is `done`, any other ending `error`. The
 * CLI runs on the host, outside the harness's sandbox: use its own sandbox flags.
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
  return Object.freeze({
    name: o.name ?? path.basename(program),
    runEpisode: (input: EpisodeInput) => runCommand(o, input),
  });
}

type Resolved = z.output<typeof OptionsSchema>;

async function runCommand(o: Resolved, input: EpisodeInput): Promise<EpisodeResult> {
  if (input.signal.aborted) return { status: 'cancelled', output: 'The episode was not started: the run had stopped.' };
  const promptDir = o.promptVia === 'file' ? await mkdtemp(path.join(tmpdir(), 'horizon-prompt-')) : undefined;
  try {
    const promptFile = promptDir ? path.join(promptDir, 'prompt.md') : undefined;
    if (promptFile) await writeFile(promptFile, input.prompt, { mode: 0o600 });
    const [program, ...args] = argv(o, input.prompt, promptFile);
    const env = {
      ...allowListed(process.env),
      ...o.env,
      ...input.env,
      ...(promptFile ? { HARNESS_PROMPT_FILE: promptFile } : {}),
    };
    // node:child_process on first use rather than with the package.
    const child = process.getBuiltinModule('node:child_process').spawn(program as string, args, {
      cwd: input.cwd,
      env,
      detached: true,
      stdio: [o.promptVia === 'stdin' ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    const stdout = new OutputCapture(o.outputLimit);
    const stderr = new OutputCapture(o.outputLimit);
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => stdout.push(chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
    // A program that exits without reading its input closes the pipe; that is its choice, not an error of the episode.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input.prompt);
    const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
    const timeoutMs = Math.max(1, Math.min(o.timeoutMs ?? MAX_TIMER_MS, input.timeoutMs, MAX_TIMER_MS));
    const outcome = await Promise.race([waitForProcess(child, timeoutMs, input.signal), spawnError]);
    if (outcome instanceof Error)
      return { status: 'error', output: `Could not start "${program}": ${outcome.message}` };
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
 * Waits until no process of the group exists. Killed processes linger until their parent reaps them (for orphans, the
 * init process), so "killed" and "gone" differ by a moment; hosts that count processes after an episode see none.
 */
async function groupGone(pgid: number): Promise<void> {
  const deadline = performance.now() + MANAGED_DEFAULTS.reapWaitMs;
  while (groupExists(pgid) && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, REAP_POLL_MS));
  }
}

function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    // ESRCH: gone. EPERM: the id now belongs to someone else's group, so ours is gone too.
    return false;
  }
}
