import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { HarnessError } from '../../../src/errors.js';
import type { ApprovalRequest } from '../../../src/tools/builtin/command-policy.js';
import { executeCommandTool, type ExecuteCommandToolOptions } from '../../../src/tools/builtin/execute-command.js';
import type { ToolOutput } from '../../../src/tools/types.js';
import { createTestContext, type TestContext, zodInput } from './support/context.js';
import { alive } from './support/process.js';

let test: TestContext | undefined;
afterEach(async () => {
  await test?.dispose();
  test = undefined;
});

const ALLOW_ALL = { rules: [], defaultDecision: 'allow' } as const;

async function run(
  command: string,
  options: ExecuteCommandToolOptions = {},
  extra: { cwd?: string } = {},
): Promise<{ text: string; files: string[] }> {
  test ??= await createTestContext();
  const tool = executeCommandTool({ sandbox: 'none', ...options });
  const output: ToolOutput = await tool.execute(zodInput(tool).parse({ command, ...extra }), test.ctx);
  return typeof output === 'string' ? { text: output, files: [] } : { text: output.text, files: output.files ?? [] };
}

async function refusal(promise: Promise<unknown>): Promise<HarnessError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(HarnessError.isInstance(error), `expected a HarnessError, got ${String(error)}`).toBe(true);
  return error as HarnessError;
}

describe('executeCommandTool under the policy', () => {
  it('runs an allowed pipeline in the workspace and reports exit code and output', async () => {
    const { text } = await run('echo hello world | wc -w && pwd');
    test ??= await createTestContext();
    expect(text).toBe(`$ echo hello world | wc -w && pwd\nExit code: 0\n--- stdout ---\n2\n${test.workspace.root}`);
  });

  it('shows a failing exit code and stderr', async () => {
    const { text } = await run('ls does-not-exist');
    expect(text).toMatch(/Exit code: 2/);
    expect(text).toMatch(/--- stderr ---\nls: cannot access 'does-not-exist'/);
  });

  it('refuses a denied command without running it', async () => {
    const error = await refusal(
      run('touch made.txt', { policy: { rules: [{ match: 'touch', decision: 'deny', reason: 'no touching' }] } }),
    );
    expect(error.code).toBe('policy-denied');
    expect(error.message).toContain('no touching');
    expect(existsSync(path.join(test?.workspace.root ?? '', 'made.txt'))).toBe(false);
  });

  it('refuses an ask command when there is no approve callback', async () => {
    const error = await refusal(run('touch made.txt'));
    expect(error.code).toBe('policy-denied');
    expect(error.message).toMatch(/needs approval .*no approve callback/);
    expect(existsSync(path.join(test?.workspace.root ?? '', 'made.txt'))).toBe(false);
  });

  it('asks the approve callback and honours its answer', async () => {
    const requests: ApprovalRequest[] = [];
    let answer = false;
    const approve = (request: ApprovalRequest): boolean => {
      requests.push(request);
      return answer;
    };
    await expect(run('touch a.txt', { approve })).rejects.toMatchObject({ code: 'policy-denied' });
    expect(existsSync(path.join(test?.workspace.root ?? '', 'a.txt'))).toBe(false);
    answer = true;
    const { files } = await run('touch a.txt', { approve });
    expect(files).toEqual(['a.txt']);
    expect(requests).toHaveLength(2);
    expect(requests[0]).toMatchObject({
      tool: 'execute_command',
      command: 'touch a.txt',
      reason: 'no rule matches "touch" (default: ask)',
      sandboxed: false,
      runId: 'run-test',
      scope: 'subtask-1',
    });
  });

  it('needs approval for every command when the sandbox is missing in auto mode', async () => {
    const requests: ApprovalRequest[] = [];
    const tool = executeCommandTool({
      sandbox: 'auto',
      bwrapPath: '/nonexistent/bwrap',
      approve: (r) => (requests.push(r), true),
    });
    expect(tool.sandbox).toMatchObject({ active: false, requiresApproval: true });
    expect(tool.sandbox.warning).toMatch(/No sandbox: bubblewrap .* is not installed/);
    test = await createTestContext();
    await tool.execute({ command: 'echo hi' }, test.ctx);
    expect(requests.map((r) => r.reason)).toEqual([expect.stringMatching(/^no sandbox: /)]);
  });

  it('without a sandbox still refuses denied commands, even with an approve callback', async () => {
    const requests: ApprovalRequest[] = [];
    const tool = executeCommandTool({
      sandbox: 'auto',
      bwrapPath: '/nonexistent/bwrap',
      approve: (r) => (requests.push(r), true),
    });
    test = await createTestContext();
    await expect(tool.execute({ command: 'sudo touch x' }, test.ctx)).rejects.toMatchObject({ code: 'policy-denied' });
    expect(requests).toEqual([]);
    const bare = executeCommandTool({ sandbox: 'auto', bwrapPath: '/nonexistent/bwrap' });
    const error = await refusal(Promise.resolve(bare.execute({ command: 'ls' }, test.ctx)));
    expect(error.code).toBe('policy-denied');
    expect(error.message).toMatch(/no sandbox: .*no approve callback/);
    expect(existsSync(path.join(test.workspace.root, 'x'))).toBe(false);
  });

  it("requires bwrap when sandbox: 'bwrap' is asked for", () => {
    expect(() => executeCommandTool({ sandbox: 'bwrap', bwrapPath: '/nonexistent/bwrap' })).toThrowError(
      expect.objectContaining({ code: 'tool-unavailable' }),
    );
  });
});

describe('executeCommandTool processes', () => {
  it('kills the whole process group on timeout', async () => {
    const { text } = await run('sleep 30 & echo $! > bg.pid; sleep 30', { policy: ALLOW_ALL, timeoutMs: 500 });
    expect(text).toContain('Timed out after 500 ms; the command and everything it started were killed.');
    const pid = Number(readFileSync(path.join(test?.workspace.root ?? '', 'bg.pid'), 'utf8'));
    expect(pid).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive(pid)).toBe(false);
  });

  it('kills the command when the run is aborted', async () => {
    test = await createTestContext();
    const tool = executeCommandTool({ sandbox: 'none', policy: ALLOW_ALL });
    const pending = tool.execute({ command: 'echo $$ > shell.pid; sleep 30' }, test.ctx);
    const pidFile = path.join(test.workspace.root, 'shell.pid');
    while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8').trim() === '')
      await new Promise((r) => setTimeout(r, 20));
    test.abort.abort();
    const output = await pending;
    expect(typeof output === 'string' ? output : output.text).toContain('Aborted');
    expect(alive(Number(readFileSync(pidFile, 'utf8')))).toBe(false);
  });

  it('caps long output, keeping head and tail', async () => {
    const { text } = await run("python3 -c \"print('A' * 50000 + 'Z')\"", { policy: ALLOW_ALL, maxOutputChars: 1_000 });
    expect(text).toMatch(/^A{500}\n\[… \d+ characters omitted …\]\nA+Z$/m);
    expect(text.length).toBeLessThan(1_200);
  });

  it('records the files a command creates or changes as artifacts', async () => {
    const { text, files } = await run('mkdir -p out && echo data > out/report.txt && echo more > notes.md', {
      policy: ALLOW_ALL,
    });
    expect(files).toEqual(['notes.md', 'out/report.txt']);
    expect(text).toContain('Files created or changed: notes.md, out/report.txt');
    expect(test?.workspace.artifacts().map((a) => [a.path, a.tool, a.scope])).toEqual(
      expect.arrayContaining([
        ['out/report.txt', 'execute_command', 'subtask-1'],
        ['notes.md', 'execute_command', 'subtask-1'],
      ]),
    );
    const again = await run('cat notes.md', { policy: ALLOW_ALL });
    expect(again.files).toEqual([]);
  });

  it('runs in a workspace subdirectory and refuses one outside', async () => {
    test = await createTestContext();
    await test.workspace.writeFile('sub/x.txt', 'x', { tool: 'test' });
    const { text } = await run('ls', {}, { cwd: 'sub' });
    expect(text).toContain('x.txt');
    await expect(run('ls', {}, { cwd: '../' })).rejects.toMatchObject({ code: 'path-outside-workspace' });
  });

  it('passes only allow-listed variables and the ones the host names', async () => {
    process.env.HH_TEST_API_KEY = 'sk-should-not-leak';
    process.env.HH_TEST_PLAIN = 'visible';
    try {
      const { text } = await run('echo "[$HH_TEST_API_KEY][$HH_TEST_PLAIN]"', { policy: ALLOW_ALL });
      expect(text).toContain('[][]');
      const passed = await run('echo "[$HH_TEST_API_KEY][$HH_TEST_PLAIN]"', {
        policy: ALLOW_ALL,
        passEnv: ['HH_TEST_PLAIN'],
      });
      expect(passed.text).toContain('[][visible]');
    } finally {
      delete process.env.HH_TEST_API_KEY;
      delete process.env.HH_TEST_PLAIN;
    }
  });
});

describe('executeCommandTool: allowed commands reaching outside the workspace', () => {
  it.each(['cat /etc/passwd', 'head ../../x', 'grep -r foo /'])('%s goes to approval', async (command) => {
    const requests: ApprovalRequest[] = [];
    await expect(run(command, { approve: (r) => (requests.push(r), false) })).rejects.toMatchObject({
      code: 'policy-denied',
    });
    expect(requests).toEqual([
      expect.objectContaining({ command, reason: expect.stringMatching(/may name a path outside the workspace/) }),
    ]);
  });
});
