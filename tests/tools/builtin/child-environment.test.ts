import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { executeCommandTool } from '../../../src/tools/builtin/execute-command.js';
import { pythonInterpreterTool } from '../../../src/tools/builtin/python-interpreter.js';
import { probeBwrap, type SandboxMode } from '../../../src/tools/builtin/sandbox.js';
import type { ToolOutput } from '../../../src/tools/types.js';
import { createTestContext, type TestContext } from './support/context.js';

// Secrets whose names no deny-pattern catches; the child must see none of them.
const CANARIES: Record<string, string> = {
  GITHUB_PAT: 'canary-github-pat',
  SENTRY_DSN: 'canary-sentry-dsn',
  REDIS_URL: 'canary-redis-url',
  PGPASS: 'canary-pgpass',
  SLACK_WEBHOOK_URL: 'canary-slack-webhook',
};
const leaks = (text: string): string[] => Object.values(CANARIES).filter((value) => text.includes(value));
const textOf = (output: ToolOutput): string => (typeof output === 'string' ? output : output.text);

let test: TestContext | undefined;
beforeAll(() => Object.assign(process.env, CANARIES));
afterAll(() => {
  for (const name of Object.keys(CANARIES)) delete process.env[name];
});
afterEach(async () => {
  await test?.dispose();
  test = undefined;
});

const modes: SandboxMode[] = probeBwrap().available ? ['none', 'bwrap'] : ['none'];

describe.each(modes)('the child environment is an allow-list (sandbox: %s)', (sandbox) => {
  it('the shell sees none of the harness secrets, and HOME is the workspace', async () => {
    test = await createTestContext();
    const shell = executeCommandTool({ sandbox, policy: { rules: [], defaultDecision: 'allow' } });
    const text = textOf(await shell.execute({ command: 'env; echo "HOME=[$HOME]"' }, test.ctx));
    expect(text).toContain('Exit code: 0');
    expect(leaks(text)).toEqual([]);
    expect(text).toContain(`HOME=[${test.workspace.root}]`);
  });

  it('Python sees none of them either', async () => {
    test = await createTestContext();
    const python = pythonInterpreterTool({ sandbox });
    const text = textOf(await python.execute({ code: 'import os\nsorted(os.environ.items())' }, test.ctx));
    expect(text).toContain("'PATH'");
    expect(leaks(text)).toEqual([]);
  });

  it('passes the names the host lists in passEnv', async () => {
    test = await createTestContext();
    const shell = executeCommandTool({
      sandbox,
      policy: { rules: [], defaultDecision: 'allow' },
      passEnv: ['REDIS_URL'],
    });
    const text = textOf(await shell.execute({ command: 'env' }, test.ctx));
    expect(leaks(text)).toEqual(['canary-redis-url']);
  });
});
