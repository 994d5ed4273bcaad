import { spawn } from 'node:child_process';
import path from 'node:path';
import { main, type CliIo } from '../../../src/cli/main.js';

const root = path.resolve(import.meta.dirname, '../../..');

/** Runs `main` in-process with captured streams and only the given environment variables. */
export async function cli(argv: string[], options: { env?: Record<string, string>; tty?: boolean } = {}) {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: { write: (text: string) => (stdout += text), isTTY: options.tty ?? false },
    stderr: { write: (text: string) => (stderr += text) },
    env: options.env ?? {},
  };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

/**
 * Starts `horizon-harness <args>` as a child process, as a user's shell would (the sources loaded through tsx), with
 * only `env`; its stdout and stderr are pipes. Slow to start on a busy machine: give the test a long timeout.
 */
export function spawnCli(args: string[], env: Record<string, string>) {
  return spawn(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', ...args], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}
