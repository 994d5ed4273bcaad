/**
 * One run from the command line: workspace, harness, reporter, exit code.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { HarnessError } from '../errors.js';
import { createHarness, type Harness } from '../harness/harness.js';
import type { RunResult } from '../contracts/work.js';
import type { ChosenBackend } from './backend-choice.js';
import { EXIT_CODES, type CliIo } from './io.js';
import { JsonLinesReporter } from './json-lines.js';
import { ProgressPrinter } from './progress-printer.js';
import type { RunReporter } from './reporter.js';
import { cliTools } from './tools.js';
import { saveCliRecord } from './cli-record.js';
import { EVENT_LOG_PATH } from '../event-log/line.js';
import { printable } from './printable.js';
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
 * it ends and when it is aborted, so the deliverable can be found whatever happened. What the run was started with
 * is recorded in the workspace (`.harness/cli.json`) for `horizon-harness resume`.
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
  const runId = `run-${randomUUID()}`;
  return cliRun({ ...spec, workspace }, io, async (harness, tools) => {
    const { recipe } = spec.backend;
    if (recipe) {
      const { decomposition, verification } = spec;
      const toolNames = tools.map((tool) => tool.name);
      await saveCliRecord(workspace, { runId, backend: recipe, decomposition, verification, tools: toolNames });
    }
    return harness.run({ task: spec.task, attachments, runId, ...(io.signal ? { signal: io.signal } : {}) });
  });
}

/** What a CLI run or resume shares: its backend, switches, workspace and output mode. */
export interface CliRunSpec {
  backend: ChosenBackend;
  decomposition: boolean;
  verification: boolean;
  workspace: string;
  json: boolean;
}

/**
 * One CLI run, started or resumed by `start`: the harness with the CLI's tools, its progress on the reporter, the
 * result, the exit code, and at the end where the event log is and how to look at it (not with `--json`: stdout
 * then holds JSON lines only).
 * @internal
 */
export async function cliRun(
  spec: CliRunSpec,
  io: CliIo,
  start: (harness: Harness, tools: readonly Tool[]) => Promise<RunResult>,
): Promise<number> {
  const { workspace } = spec;
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
    const result = await start(harness, tools);
    const exitCode = exitCodeOf(result);
    reporter.finish(result, exitCode);
    if (!spec.json) stdout.write(printable(eventLogHint(result.workspace)));
    if (result.status === 'aborted') {
      stderr.write(`Aborted. The workspace is kept: ${result.workspace}\n`);
      if (spec.backend.recipe)
        stderr.write(`Go on with it: npx horizon-harness resume ${shellWord(result.workspace)}\n`);
    }
    return exitCode;
  } finally {
    reporter.close();
  }
}

/** Where the run's event log is and the command that shows it. */
function eventLogHint(workspace: string): string {
  return (
    `Event log: ${path.join(workspace, EVENT_LOG_PATH)}\n` +
    `Look at the run: npx horizon-harness show ${shellWord(workspace)}\n`
  );
}

/** `text` as one shell word: as it is when it holds only safe characters, else single-quoted. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
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
