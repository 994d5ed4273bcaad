#!/usr/bin/env node
/**
 * The `horizon-harness` executable: wires the process to {@link main}. Ctrl-C aborts the run cleanly (the workspace
 * is kept and its path printed); a second Ctrl-C quits at once. A reader that closes stdout early (`| head`) aborts
 * the run the same way, and the exit code says so.
 * @module
 */
import { closableStdout } from './closable-stdout.js';
import { EXIT_CODES, main } from './main.js';

const controller = new AbortController();
process.on('SIGINT', () => {
  if (controller.signal.aborted) process.exit(EXIT_CODES.aborted);
  process.stderr.write('\nStopping the run… (Ctrl-C again to quit at once)\n');
  controller.abort();
});

// Nobody reads the rest of the output: stop the run rather than finish work whose progress goes nowhere.
const stdout = closableStdout(process.stdout, () => controller.abort());

const exitCode = await main(process.argv.slice(2), {
  stdout,
  stderr: process.stderr,
  env: process.env,
  signal: controller.signal,
});
process.exitCode = stdout.closed ? EXIT_CODES.outputClosed : exitCode;
