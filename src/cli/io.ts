/**
 * What the CLI reads and writes, passed in so that `main()` runs the same in-process (tests) and as a program.
 * @module
 */

/** A text sink such as `process.stdout`; `isTTY` turns on the spinner. */
export interface CliOutput {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** The CLI's whole environment: its streams, its variables and the signal that aborts a run (Ctrl-C). */
export interface CliIo {
  stdout: CliOutput;
  stderr: CliOutput;
  /** Environment variables (API keys, model, base URL); the CLI reads no others. */
  env: Readonly<Record<string, string | undefined>>;
  /** Aborting it stops the run cleanly; `main()` then resolves with {@link EXIT_CODES}.aborted. */
  signal?: AbortSignal;
}

/** The exit codes of `horizon-harness` (documented in docs/cli.md). */
export const EXIT_CODES = {
  succeeded: 0,
  /** The run failed or timed out. */
  failed: 1,
  /** Bad usage: an unknown option, a missing task, conflicting flags, no API key, a missing attachment. */
  usage: 2,
  /**
   * The run ended with a deliverable (kept) that no verifier could judge: no usable verdict came, also in a fresh
   * request. Nothing says it meets the request.
   */
  unverified: 3,
  /** The run was aborted (Ctrl-C / SIGINT); 128 + SIGINT's number, as shells report it. */
  aborted: 130,
  /**
   * The reader closed stdout before the output ended (`… | head -2`): the run was aborted and its workspace kept;
   * 128 + SIGPIPE's number, as shells report a program stopped by a closed pipe.
   */
  outputClosed: 141,
} as const;
