/**
 * `executeCommandTool({ workspaceAccess: 'read-only' })`: commands inspect the workspace but cannot change it or read
 * the harness's state; without bubblewrap there is no such tool.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HarnessError } from '../../../src/errors.js';
import { executeCommandTool } from '../../../src/tools/builtin/execute-command.js';
import { probeBwrap, sandboxArgs } from '../../../src/tools/builtin/sandbox.js';
import type { ToolOutput } from '../../../src/tools/types.js';
import { createTestContext, type TestContext } from './support/context.js';

const textOf = (output: ToolOutput): string => (typeof output === 'string' ? output : output.text);
const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (error) {
    return HarnessError.isInstance(error) ? error.code : 'not a HarnessError';
  }
  return undefined;
};

describe('a read-only command tool', () => {
  it('mounts the workspace read-only and hides the harness folder behind an empty read-only one', () => {
    const args = sandboxArgs({ workspaceRoot: '/w/run-1', allowNetwork: false, workspaceAccess: 'read-only' });
    const joined = args.join(' ');
    expect(joined).toContain('--ro-bind /w/run-1 /w/run-1 --tmpfs /w/run-1/.harness --remount-ro /w/run-1/.harness');
    expect(joined).not.toContain('--bind /w/run-1');
    expect(args).toContain('--unshare-net');
  });

  it('is refused without the sandbox or with network, since nothing else keeps it read-only', () => {
    expect(codeOf(() => executeCommandTool({ workspaceAccess: 'read-only', sandbox: 'none' }))).toBe('invalid-options');
    expect(codeOf(() => executeCommandTool({ workspaceAccess: 'read-only', policy: { allowNetwork: true } }))).toBe(
      'invalid-options',
    );
    expect(codeOf(() => executeCommandTool({ workspaceAccess: 'read-only', bwrapPath: '/nonexistent/bwrap' }))).toBe(
      'tool-unavailable',
    );
  });
});

const bwrap = probeBwrap();

describe.skipIf(!bwrap.available)(`a read-only command tool in bubblewrap (${bwrap.reason})`, () => {
  let test: TestContext;
  beforeEach(async () => {
    test = await createTestContext();
    await writeFile(path.join(test.workspace.root, 'notes.txt'), 'river notes\n');
    await mkdir(path.join(test.workspace.root, '.harness/outputs'), { recursive: true });
    await writeFile(path.join(test.workspace.root, '.harness/outputs/execute-1.txt'), 'TRACE\n');
  });
  afterEach(() => test.dispose());

  const tool = () =>
    executeCommandTool({ workspaceAccess: 'read-only', policy: { rules: [], defaultDecision: 'allow' } });
  const run = async (command: string) => textOf(await tool().execute({ command }, test.ctx));

  it('is read-only, reads the workspace, and every write to it fails', async () => {
    expect(tool().readOnly).toBe(true);
    expect(tool().workspaceAccess).toBe('read-only');
    expect(await run('cat notes.txt')).toContain('river notes');
    const written = await run('echo x > new.txt; echo y >> notes.txt; mkdir d; rm notes.txt; echo done');
    expect(written.match(/Read-only file system/g)?.length).toBeGreaterThanOrEqual(3);
    expect(written).toContain('done');
    expect((await readdir(test.workspace.root)).sort()).toEqual(['.harness', 'notes.txt']);
    // Its private /tmp and HOME are writable, and gone afterwards.
    expect(await run('cp notes.txt /tmp/s && cat /tmp/s && echo "$HOME"')).toMatch(/river notes\n\/tmp/);
  });

  it("cannot read or write the harness's state", async () => {
    const text = await run('ls -A .harness | wc -l; cat .harness/outputs/execute-1.txt; touch .harness/x');
    expect(text).toMatch(/^0$/m);
    expect(text).not.toContain('TRACE');
    expect(text).toContain('Read-only file system');
  });
});
