#!/usr/bin/env node
/**
 * The `horizon-harness` executable: wires the process to {@link main}. Ctrl-C aborts the run cleanly (the workspace
 * is kept and its path printed); a second Ctrl-C quits at once.
 * @module
 */
import { EXIT_CODES, main } from './main.js';

const controller = new AbortController();
process.on('SIGINT', () => {
  if (controller.signal.aborted) process.exit(EXIT_CODES.aborted);
  process.stderr.write('\nStopping the run… (Ctrl-C again to quit at once)\n');
  controller.abort();
});

process.exitCode = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  signal: controller.signal,
});
