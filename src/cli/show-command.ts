/**
 * `horizon-harness show <workspace | events.jsonl>`: writes a run's page (see `horizon-harness/viewer`) and can open it.
 * @module
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { locateEventLog, readRunEvents, renderRunHtml } from '../viewer/render-run-html.js';
import { EXIT_CODES, type CliIo } from './io.js';
import { printable } from './printable.js';

interface ShowFlags {
  out?: string;
  open?: boolean;
  contextWindow?: number;
  runId?: string;
}

/** Adds `show` to `program`; the action reports its exit code through `setExitCode`. */
export function addShowCommand(program: Command, io: CliIo, setExitCode: (code: number) => void): void {
  program
    .command('show')
    .description("Write a run's event log as one self-contained HTML page (timeline, context chart, verdicts, tools).")
    .argument('<source>', 'a workspace directory (reads .harness/events.jsonl) or an events.jsonl file')
    .option(
      '--out <file>',
      'where to write the page (default: run.html in the workspace, or beside the events.jsonl given)',
    )
    .option('--open', "open the page with the platform's opener (xdg-open, open or start)")
    .option(
      '--context-window <tokens>',
      "the context window drawn on the chart for every call (default: each call's, as its llm-request records it)",
      Number,
    )
    .option('--run-id <id>', 'the run to show when the log holds several (default: the last one)')
    .action(async (source: string, flags: ShowFlags) => {
      const events = await readRunEvents(source);
      const page = renderRunHtml(events, {
        ...(flags.contextWindow !== undefined ? { contextWindow: flags.contextWindow } : {}),
        ...(flags.runId !== undefined ? { runId: flags.runId } : {}),
      });
      const out = path.resolve(flags.out ?? (await defaultOut(source)));
      await writeFile(out, page);
      io.stdout.write(`Wrote ${printable(out)}\n`);
      if (flags.open && !(await openWithPlatform(out, io.env))) {
        io.stdout.write(`No program to open it with here: open ${printable(out)} in a browser.\n`);
      }
      setExitCode(EXIT_CODES.succeeded);
    });
}

/** `run.html` in the workspace, or beside the events.jsonl file given. */
async function defaultOut(source: string): Promise<string> {
  const { file, workspace } = await locateEventLog(source);
  return path.join(workspace ?? path.dirname(file), 'run.html');
}

/**
 * Opens `file` with xdg-open (Linux and others), open (macOS) or start (Windows), found on the CLI's PATH and left
 * running on its own; false when it cannot be started.
 */
function openWithPlatform(file: string, env: CliIo['env']): Promise<boolean> {
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [file]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', file]]
        : ['xdg-open', [file]];
  return new Promise((resolve) => {
    const child = spawn(command, args, { detached: true, stdio: 'ignore', env: { ...env } });
    child.once('error', () => resolve(false));
    child.once('spawn', () => {
      child.unref();
      resolve(true);
    });
  });
}
