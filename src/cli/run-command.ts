/**
 * One run from the command line: workspace, harness, reporter, exit code.
 * @module
 */
import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { HarnessError } from '../errors.js';
import { createHarness } from '../harness/harness.js';
import type { RunResult } from '../contracts/work.js';
import type { ChosenBackend } from './backend-choice.js';
import { EXIT_CODES, type CliIo } from './io.js';
import { JsonLinesReporter } from './json-lines.js';
import { ProgressPrinter } from './progress-printer.js';
import type { RunReporter } from './reporter.js';
import { cliTools } from './tools.js';
import { redactingOutput } from './redacting-output.js';
import type { Tool } from '../tools/types.js';
import { SecretRedactor } from '../util/secrets.js';

/** What one CLI run needs, after the flags are parsed. */
export interface RunSpec {
  task: string;
  attachments: string[];
  backend: ChosenBackend;
  decomposition: boolean;
  verification: boolean;
  /** The workspace directory; a fresh one under the system temp directory when absent. */
  workspace?: string | undefined;
  json: boolean;
}

/**
 * Runs `spec` and returns the exit code. The workspace is always kept, and its path printed when the run starts, when
 * it ends and when it is aborted, so the deliverable can be found whatever happened.
 */
export async function runCommand(spec: RunSpec, io: CliIo): Promise<number> {
  if (!spec.task.trim())
    throw new HarnessError(
      'invalid-input',
      'The task is empty: pass the request as the first argument, e.g. horizon-harness run "Write notes.md".',
    );
  const attachments = await checkAttachments(spec.attachments);
  const workspace =
    spec.workspace === undefined
      ? await mkdtemp(path.join(tmpdir(), 'horizon-harness-'))
      : path.resolve(spec.workspace);
  const tools: Tool[] = [];
  // The backend's key, the tools' passed-on values and the secret-named variables of the CLI's environment.
  const redactor = new SecretRedactor({ owners: () => [spec.backend.backend, ...tools], env: io.env });
  const stdout = redactingOutput(io.stdout, redactor);
  const stderr = redactingOutput(io.stderr, redactor);
  const reporter: RunReporter = spec.json ? new JsonLinesReporter(stdout, stderr) : new ProgressPrinter(stdout);
  try {
    reporter.start({ label: spec.backend.label, workspace });
    tools.push(...cliTools(io.env, (text) => reporter.note(text)));
    const harness = createHarness({
      backend: spec.backend.backend,
      tools,
      // Always kept: a directory the CLI names is one the harness never removes, and the CLI prints its path for the
      // user to open. Any workspace-cleanup setting of the harness stays off here.
      workspace,
      decomposition: spec.decomposition,
      verification: spec.verification,
    });
    harness.onAny((event) => reporter.event(event));
    const result = await harness.run({ task: spec.task, attachments, ...(io.signal ? { signal: io.signal } : {}) });
    const exitCode = exitCodeOf(result);
    reporter.finish(result, exitCode);
    if (result.status === 'aborted') stderr.write(`Aborted. The workspace is kept: ${result.workspace}\n`);
    return exitCode;
  } finally {
    reporter.close();
  }
}

/** The exit code of a finished run. */
export function exitCodeOf(result: RunResult): number {
  switch (result.status) {
    case 'succeeded':
      return EXIT_CODES.succeeded;
    case 'aborted':
      return EXIT_CODES.aborted;
    case 'unverified':
      return EXIT_CODES.unverified;
    default:
      return EXIT_CODES.failed;
  }
}

/** Absolute paths of the attachments; a missing one or a directory is a usage error, found before any model call. */
async function checkAttachments(files: readonly string[]): Promise<string[]> {
  const checked: string[] = [];
  for (const file of files) {
    const absolute = path.resolve(file);
    const info = await stat(absolute).catch(() => undefined);
    if (!info?.isFile())
      throw new HarnessError(
        'invalid-input',
        `Attachment not found or not a file: ${file}. --attach takes paths of existing files.`,
      );
    checked.push(absolute);
  }
  return checked;
}
