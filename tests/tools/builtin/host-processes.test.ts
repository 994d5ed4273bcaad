import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { executeCommandTool } from '../../../src/tools/builtin/execute-command.js';
import type { ToolOutput } from '../../../src/tools/types.js';
import { createTestContext, type TestContext } from './support/context.js';
import { alive } from './support/process.js';

let test: TestContext | undefined;
const strays: number[] = [];
afterEach(async () => {
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone: the behaviour under test.
    }
  }
  await test?.dispose();
  test = undefined;
});

const textOf = (output: ToolOutput): string => (typeof output === 'string' ? output : output.text);

/** Processes whose environment carries `entry`. */
function carrying(entry: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        return readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(entry);
      } catch {
        return false;
      }
    })
    .map(Number);
}

// A daemon that leaves the process group and the session (setsid, double fork), with its pid and the call's token
// written down before the command ends.
const DAEMON =
  "(setsid sh -c 'echo $$ > daemon.pid; exec sleep 300' > /dev/null 2>&1 < /dev/null &); " +
  'echo "$HORIZON_HARNESS_PROCESS_TOKEN" > token.txt; ' +
  'while [ ! -s daemon.pid ]; do sleep 0.05; done';

describe.runIf(process.platform === 'linux')('execute_command without bwrap: nothing it started survives', () => {
  const shell = (timeoutMs?: number) =>
    executeCommandTool({
      sandbox: 'none',
      policy: { rules: [], defaultDecision: 'allow' },
      approve: () => true,
      ...(timeoutMs ? { timeoutMs } : {}),
    });

  it.each([
    ['the command ends', DAEMON, undefined],
    ['the command times out', `${DAEMON}; sleep 30`, 1_000],
  ])('kills a setsid, double-forked daemon when %s', async (_when, command, timeoutMs) => {
    test = await createTestContext();
    const text = textOf(await shell(timeoutMs).execute({ command }, test.ctx));
    const root = test.workspace.root;
    const pid = Number(readFileSync(path.join(root, 'daemon.pid'), 'utf8'));
    const token = readFileSync(path.join(root, 'token.txt'), 'utf8').trim();
    strays.push(pid);
    expect(text).toMatch(timeoutMs ? /Timed out/ : /Exit code: 0/);
    expect(token).toMatch(/^[0-9a-f]{32}$/);
    expect(alive(pid)).toBe(false);
    expect(carrying(`HORIZON_HARNESS_PROCESS_TOKEN=${token}`)).toEqual([]);
  });
});
