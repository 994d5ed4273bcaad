/**
 * The shape of an agent managed mode runs for one episode (an agent CLI, an in-process agent, the built-in loop).
 * @module
 */

/** How an episode ended. */
export type EpisodeStatus = 'done' | 'timeout' | 'error' | 'cancelled';

/** One episode to run: a prompt, in the workspace, within a time limit. */
export interface EpisodeInput {
  prompt: string;
  /** The workspace root: the agent's working directory. */
  cwd: string;
  timeoutMs: number;
  /** Aborted when the run stops; the adapter must end the episode then. */
  signal: AbortSignal;
  /**
   * Variables for the agent's environment. Managed runs pass `HARNESS_RUN_ID`, `HARNESS_ROUND` and `HARNESS_ROLE`
   * (`execute` or `audit`).
   */
  env?: Record<string, string>;
}

/** What an episode produced: its status, its output (the agent's final message or transcript) and an exit code. */
export interface EpisodeResult {
  status: EpisodeStatus;
  output: string;
  exitCode?: number;
}

/**
 * An agent managed mode can run for one episode: the executor carrying out a contract, or the auditor checking one.
 *
 * @example
 * ```ts
 * const echo: AgentAdapter = {
 *   name: 'echo',
 *   async runEpisode({ prompt }) {
 *     return { status: 'done', output: `I read ${prompt.length} characters and did nothing.` };
 *   },
 * };
 * ```
 */
export interface AgentAdapter {
  name: string;
  /** What the host should know before a run uses the agent (e.g. that it runs outside the sandbox); in `run-start`. */
  readonly warnings?: readonly string[];
  runEpisode(input: EpisodeInput): Promise<EpisodeResult>;
}
