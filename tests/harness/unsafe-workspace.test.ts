import { mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main, type CliIo } from '../../src/cli/main.js';
import { HarnessError } from '../../src/errors.js';
import { createHarness } from '../../src/harness/harness.js';
import { ScriptedBackend } from '../../src/testing/index.js';
import { LocalWorkspace } from '../../src/workspace/local-workspace.js';
import type { Workspace } from '../../src/workspace/types.js';

/** This checkout: the harness's own package (its package.json is named horizon-harness). */
const INSTALL_DIR = path.resolve(import.meta.dirname, '../..');

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

function refusal(make: () => unknown): HarnessError {
  try {
    make();
  } catch (error) {
    if (HarnessError.isInstance(error) && error.code === 'invalid-options') return error;
    throw error;
  }
  throw new Error('expected an invalid-options error, got none');
}

const harnessIn = (workspace: unknown) => () =>
  createHarness({ backend: new ScriptedBackend([]), workspace: workspace as string });

describe('a workspace no run may work in is refused at createHarness, naming it and what to pass instead', () => {
  it.each([
    ['the root', '/'],
    ['/etc', '/etc'],
    ['a directory inside /etc', '/etc/harness-ws'],
    ['/usr/local', '/usr/local'],
    ['/bin', '/bin'],
    ['/lib64', '/lib64'],
    ['/proc', '/proc'],
    ['/var itself', '/var'],
    ['/root itself', '/root'],
    ['the home directory itself', os.homedir()],
    ['the home directory with a trailing slash', `${os.homedir()}/`],
    ['the temporary directory itself', os.tmpdir()],
    ["the harness's install directory", INSTALL_DIR],
    ["a directory inside the harness's install directory", path.join(INSTALL_DIR, 'src')],
    ["a parent of the harness's install directory", path.dirname(INSTALL_DIR)],
  ])('%s', (_name, dir) => {
    for (const option of [dir, { dir }]) {
      const error = refusal(harnessIn(option));
      expect(error.message).toContain(`"${dir}"`);
      expect(error.message).toMatch(/Pass a dedicated directory .*or leave `workspace` out/);
    }
  });

  it('a link to a system directory is followed', async () => {
    const parent = await mkdtemp(path.join(os.tmpdir(), 'unsafe-ws-'));
    dirs.push(parent);
    await symlink('/etc', path.join(parent, 'innocent'));
    const error = refusal(harnessIn(path.join(parent, 'innocent', 'nested')));
    expect(error.message).toContain('(/etc/nested)');
    expect(error.message).toContain('a system directory');
  });

  it('a Workspace of your own whose root is a system directory', () => {
    const own = { root: '/', resolve: async (p: string) => p } as unknown as Workspace;
    expect(refusal(harnessIn(own)).message).toContain('"/"');
  });

  it('a subdirectory of home, and of the temporary directory, are fine', () => {
    expect(() => harnessIn(path.join(os.homedir(), 'agent-work', 'task-1'))()).not.toThrow();
    expect(() => harnessIn(path.join(os.tmpdir(), 'some-run'))()).not.toThrow();
  });

  it('LocalWorkspace.create refuses them too, before creating anything', async () => {
    for (const dir of ['/', '/etc/harness-created', os.homedir()]) {
      const error = await LocalWorkspace.create({ dir }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(HarnessError.isInstance(error) && error.code).toBe('invalid-options');
    }
  });

  it('the CLI exits 2 with the message', async () => {
    let stderr = '';
    const io: CliIo = {
      stdout: { write: () => true },
      stderr: { write: (text: string) => (stderr += text) },
      env: { OPENAI_API_KEY: 'sk-test' },
    };
    const code = await main(
      ['run', 'Write x.md', '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm', '--workspace', '/'],
      io,
    );
    expect(code).toBe(2);
    expect(stderr).toMatch(/The workspace "\/" is a shared system directory/);
  });
});
