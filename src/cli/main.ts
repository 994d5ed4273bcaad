/**
 * `horizon-harness`, the command line: `run` a task on a model, `replay` the offline demo, `resume` a stopped run.
 * @module
 */
import { Command, CommanderError, Option } from 'commander';
import packageJson from '../../package.json' with { type: 'json' };
import { HarnessError } from '../errors.js';
import { addBenchCommand } from './bench-command.js';
import { addShowCommand } from './show-command.js';
import { backendOf, chooseBackend, type BackendFlags } from './backend-choice.js';
import { DEMO_TASK } from '../testing/demo-scenario.js';
import { EXIT_CODES, type CliIo } from './io.js';
import { runCommand } from './run-command.js';
import { resumeCommand } from './resume-command.js';
import { printable } from './printable.js';
import { redactingOutput } from './redacting-output.js';
import { SecretRedactor } from '../util/secrets.js';

export { EXIT_CODES, type CliIo, type CliOutput } from './io.js';

interface OutputFlags {
  workspace?: string;
  json?: boolean;
}

interface RunFlags extends BackendFlags, OutputFlags {
  attach: string[];
  decomposition: boolean;
  verification: boolean;
}

/**
 * Runs the CLI on `argv` (the arguments after the program name) and resolves with the exit code: 0 succeeded,
 * 1 failed or timed out, 2 bad usage, 130 aborted through `io.signal`. Never exits the process and reads nothing
 * but `io`, so it runs in-process in tests.
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let exitCode: number = EXIT_CODES.succeeded;
  const program = buildProgram(io, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has already printed its message (or the help); --help and --version end with 0.
      return error.exitCode === 0 ? EXIT_CODES.succeeded : EXIT_CODES.usage;
    }
    // An error may quote anything (a provider's reply, a path, a variable): what looks secret is replaced.
    const stderr = redactingOutput(io.stderr, new SecretRedactor({ env: io.env }));
    if (HarnessError.isInstance(error) && (error.code === 'invalid-options' || error.code === 'invalid-input')) {
      stderr.write(`horizon-harness: ${printable(error.message)}\n`);
      return EXIT_CODES.usage;
    }
    stderr.write(`horizon-harness: ${printable(error instanceof Error ? error.message : String(error))}\n`);
    return EXIT_CODES.failed;
  }
}

function buildProgram(io: CliIo, setExitCode: (code: number) => void): Command {
  const program = new Command('horizon-harness')
    .description('Run long-horizon agent tasks: plan, execute subtasks, synthesize, verify and repair a deliverable.')
    .version(packageJson.version)
    // Settings inherited by the subcommands added below: errors throw instead of exiting, output goes to io.
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .showHelpAfterError('(run horizon-harness --help for usage)');

  program
    .command('run')
    .description('Run a task on a model and print its progress, deliverable and report.')
    .argument('<task>', 'the request, quoted')
    .option(
      '--attach <file>',
      'a file copied into the workspace under attachments/ (repeat the flag for several)',
      (file: string, files: string[]) => [...files, file],
      [] as string[],
    )
    .option('--model <name>', 'model name (default: HARNESS_MODEL, else the provider default)')
    .addOption(
      new Option('--base-url <url>', 'an OpenAI-compatible server, e.g. http://localhost:11434/v1').conflicts(
        'anthropic',
      ),
    )
    .option('--anthropic', 'use the Anthropic Messages API (key from ANTHROPIC_API_KEY)')
    .option('--api-key-env <name>', 'read the API key from this environment variable')
    .option('--no-decomposition', 'skip the planner: one subtask holds the whole request')
    .option('--no-verification', 'skip verification and repair')
    .option('--no-stream', 'call the model without streaming (for servers without SSE); no live text')
    .option('--workspace <dir>', 'run in this directory (created when missing; default: a new temp directory)')
    .option('--json', 'print the events as JSON lines, then the result line; nothing else on stdout')
    .action(async (task: string, flags: RunFlags) => {
      const backend = chooseBackend(flags, io.env);
      setExitCode(
        await runCommand(
          {
            task,
            attachments: flags.attach,
            backend,
            decomposition: flags.decomposition,
            verification: flags.verification,
            workspace: flags.workspace,
            json: flags.json === true,
          },
          io,
        ),
      );
    });

  program
    .command('replay')
    .description('Run the offline demo (a 3-day Lisbon itinerary) on the built-in replay backend; no key, no network.')
    .option('--workspace <dir>', 'run in this directory (created when missing; default: a new temp directory)')
    .option('--json', 'print the events as JSON lines, then the result line; nothing else on stdout')
    .action(async (flags: OutputFlags) => {
      const backend = backendOf({ kind: 'replay' }, io.env);
      setExitCode(
        await runCommand(
          {
            task: DEMO_TASK,
            attachments: [],
            backend,
            decomposition: true,
            verification: true,
            workspace: flags.workspace,
            json: flags.json === true,
          },
          io,
        ),
      );
    });

  program
    .command('resume')
    .description('Go on with a run of `run` or `replay` that was stopped (Ctrl-C, a crash), as it was started.')
    .argument('<workspace>', 'the workspace directory of the stopped run')
    .option('--json', 'print the events as JSON lines, then the result line; nothing else on stdout')
    .action(async (workspace: string, flags: OutputFlags) => {
      setExitCode(await resumeCommand(workspace, { json: flags.json === true }, io));
    });

  addBenchCommand(program, io, setExitCode);
  addShowCommand(program, io, setExitCode);

  return program;
}
