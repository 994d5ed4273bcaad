import { afterEach, describe, expect, it } from 'vitest';
import { HarnessError } from '../../../src/errors.js';
import type { ApprovalRequest } from '../../../src/tools/builtin/command-policy.js';
import {
  pythonInterpreterTool,
  type PythonInterpreterToolOptions,
} from '../../../src/tools/builtin/python-interpreter.js';
import type { ToolContext, ToolOutput } from '../../../src/tools/types.js';
import { createTestContext, type TestContext, zodInput } from './support/context.js';
import { alive } from './support/process.js';

const contexts: TestContext[] = [];
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.dispose();
});

async function context(scope = 'subtask-1'): Promise<TestContext> {
  const created = await createTestContext(scope);
  contexts.push(created);
  return created;
}

function textOf(output: ToolOutput): string {
  return typeof output === 'string' ? output : output.text;
}

function python(
  options: PythonInterpreterToolOptions = {},
): (code: string, ctx: ToolContext, reset?: boolean) => Promise<ToolOutput> {
  const tool = pythonInterpreterTool({ sandbox: 'none', ...options });
  return (code, ctx, reset) => Promise.resolve(tool.execute(zodInput(tool).parse({ code, reset }), ctx));
}

describe('pythonInterpreterTool', () => {
  it('keeps variables between calls and shows the last expression', async () => {
    const { ctx } = await context();
    const run = python();
    expect(textOf(await run('import math\nx = 41\nprint("set x")', ctx))).toBe('--- stdout ---\nset x');
    expect(textOf(await run('x + 1', ctx))).toBe('--- result ---\n42');
    expect(textOf(await run('{"pi": round(math.pi, 2)}', ctx))).toBe("--- result ---\n{'pi': 3.14}");
  });

  it('captures stderr and tracebacks, and the session survives an error', async () => {
    const { ctx } = await context();
    const run = python();
    const text = textOf(await run('import sys\ny = 5\nprint("warn", file=sys.stderr)\n1 / 0', ctx));
    expect(text).toContain('--- stderr ---\nwarn');
    expect(text).toMatch(/--- error ---\nTraceback[\s\S]*ZeroDivisionError: division by zero/);
    expect(text).not.toContain('_run');
    expect(textOf(await run('y', ctx))).toBe('--- result ---\n5');
  });

  it('starts over on reset', async () => {
    const { ctx } = await context();
    const run = python();
    await run('z = 1', ctx);
    expect(textOf(await run('', ctx, true))).toBe('The Python session was reset; all variables are cleared.');
    expect(textOf(await run('z', ctx))).toContain("NameError: name 'z' is not defined");
    await run('z = 2', ctx);
    expect(textOf(await run('z', ctx, true))).toContain('NameError');
  });

  it('keeps one session per executor scope', async () => {
    const a = await context('subtask-1');
    const b = await context('subtask-2');
    const run = python();
    await run('shared = "a"', a.ctx);
    expect(textOf(await run('shared', b.ctx))).toContain('NameError');
    expect(textOf(await run('shared', a.ctx))).toBe("--- result ---\n'a'");
  });

  it('kills the session on timeout and starts a fresh one on the next call', async () => {
    const { ctx } = await context();
    const run = python({ timeoutMs: 700 });
    await run('kept = 1', ctx);
    const text = textOf(await run('import time\nprint("before", flush=True)\ntime.sleep(30)', ctx));
    expect(text).toContain('--- stdout ---\nbefore');
    expect(text).toContain('Timed out after 700 ms; the Python session was killed');
    expect(textOf(await run('kept', ctx))).toContain("NameError: name 'kept' is not defined");
    expect(textOf(await run('1 + 1', ctx))).toBe('--- result ---\n2');
  });

  it('ends the session when the executor scope ends', async () => {
    const test = await context();
    const run = python();
    const pid = Number(textOf(await run('import os\nos.getpid()', test.ctx)).split('\n')[1]);
    expect(alive(pid)).toBe(true);
    await test.endScope();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive(pid)).toBe(false);
  });

  it('records files it writes in the workspace as artifacts', async () => {
    const { ctx, workspace } = await context();
    const run = python();
    const output = await run(
      'import os\nos.makedirs("data", exist_ok=True)\nopen("data/out.csv", "w").write("a,b\\n1,2\\n")',
      ctx,
    );
    expect(typeof output === 'object' && output.files).toEqual(['data/out.csv']);
    expect(textOf(output)).toContain('Files created or changed: data/out.csv');
    expect(workspace.artifacts().map((a) => [a.path, a.tool, a.scope, a.size])).toEqual([
      ['data/out.csv', 'python_interpreter', 'subtask-1', 8],
    ]);
    expect(textOf(await run('import os\nsorted(os.listdir("."))', ctx))).toBe("--- result ---\n['data']");
  });

  it('does not let code read the protocol stream', async () => {
    const { ctx } = await context();
    const run = python();
    expect(textOf(await run('input()', ctx))).toContain('EOFError');
    expect(textOf(await run('print("still here")', ctx))).toBe('--- stdout ---\nstill here');
  });

  it('reports the process exiting and recovers', async () => {
    const { ctx } = await context();
    const run = python();
    expect(textOf(await run('import os\nos._exit(3)', ctx))).toContain('The Python process exited (code 3)');
    expect(textOf(await run('2 * 21', ctx))).toBe('--- result ---\n42');
  });

  it('asks for approval when no sandbox is available in auto mode', async () => {
    const { ctx } = await context();
    const requests: ApprovalRequest[] = [];
    const run = python({ sandbox: 'auto', bwrapPath: '/nonexistent/bwrap', approve: (r) => (requests.push(r), true) });
    expect(textOf(await run('6 * 7', ctx))).toBe('--- result ---\n42');
    expect(requests).toEqual([
      expect.objectContaining({ tool: 'python_interpreter', command: '6 * 7', sandboxed: false }),
    ]);
    const refused = python({ sandbox: 'auto', bwrapPath: '/nonexistent/bwrap' });
    await expect(refused('1', ctx)).rejects.toMatchObject({ code: 'policy-denied' });
  });

  it('throws tool-unavailable at creation when Python 3 is missing', () => {
    let error: unknown;
    try {
      pythonInterpreterTool({ python: '/nonexistent/python3' });
    } catch (e) {
      error = e;
    }
    expect(HarnessError.isInstance(error) && error.code).toBe('tool-unavailable');
    expect(String(error)).toMatch(/apt-get install python3.*leave the python_interpreter tool out/);
  });
});
