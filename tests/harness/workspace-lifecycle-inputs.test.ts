import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile as fsWriteFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { createHarness } from '../../src/harness/harness.js';
import { submit } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import type { Workspace } from '../../src/workspace/types.js';
import { tempDir } from './helpers.js';

const TASK = 'Summarise the attachment in one line.';
const quick = { decomposition: false, verification: false } as const;

function hasMkfifo(): boolean {
  try {
    execFileSync('mkfifo', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('input errors resolve', () => {
  it.runIf(process.platform === 'linux' && existsSync('/proc/1'))(
    'refuses at once with invalid-options a workspace in /proc (/proc/1/nope), a system directory',
    () => {
      expect(() => createHarness({ backend: new ScriptedBackend([]), workspace: '/proc/1/nope' })).toThrow(
        expect.objectContaining({ code: 'invalid-options', message: expect.stringContaining('/proc/1/nope') }),
      );
    },
  );

  it('rejects a workspace path below a regular file', async () => {
    const file = path.join(await tempDir(), 'plain.txt');
    await fsWriteFile(file, 'x');
    const harness = createHarness({ backend: new ScriptedBackend([]), workspace: path.join(file, 'sub') });
    await expect(harness.run(TASK)).rejects.toMatchObject({
      code: 'invalid-options',
      message: expect.stringContaining('not a directory'),
    });
  });

  it.runIf(hasMkfifo())('fails the run at intake for a FIFO attachment, without opening it', async () => {
    const fifo = path.join(await tempDir(), 'pipe.txt');
    execFileSync('mkfifo', [fifo]);
    const backend = new ScriptedBackend([]);
    const result = await createHarness({ backend, workspace: await tempDir(), ...quick }).run({
      task: TASK,
      attachments: [fifo],
    });
    expect(result).toMatchObject({
      status: 'failed',
      error: { code: 'invalid-input', message: expect.stringContaining('FIFO') },
    });
    expect(backend.calls).toHaveLength(0);
  });

  it('fails the run at intake for a directory or a socket attachment', async () => {
    const dir = await tempDir();
    const folder = path.join(dir, 'folder');
    await mkdir(folder);
    const socketPath = path.join(dir, 'sock');
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    try {
      for (const [attachment, kind] of [
        [folder, 'a directory'],
        [socketPath, 'a socket'],
      ] as const) {
        const result = await createHarness({
          backend: new ScriptedBackend([]),
          workspace: await tempDir(),
          ...quick,
        }).run({
          task: TASK,
          attachments: [attachment],
        });
        expect(result).toMatchObject({
          status: 'failed',
          error: { code: 'invalid-input', message: expect.stringContaining(kind) },
        });
      }
    } finally {
      server.close();
    }
  });

  it('still copies a regular file attachment', async () => {
    const file = path.join(await tempDir(), 'brief.txt');
    await fsWriteFile(file, 'The brief.');
    const backend = new ScriptedBackend({ execute: [submit('read it')] });
    const result = await createHarness({ backend, workspace: await tempDir(), ...quick }).run({
      task: TASK,
      attachments: [file],
    });
    expect(result.status).toBe('succeeded');
    expect(existsSync(path.join(result.workspace, 'attachments', 'brief.txt'))).toBe(true);
  });
});

describe('options: workspace and onListenerError', () => {
  it('rejects a workspace option of the wrong shape, and dir with keep: false', () => {
    const backend = new ScriptedBackend([]);
    expect(() => createHarness({ backend, workspace: 42 as unknown as string })).toThrow(
      expect.objectContaining({
        code: 'invalid-options',
        message: expect.stringContaining('{ dir?: string, keep?: boolean }'),
      }),
    );
    expect(() => createHarness({ backend, workspace: { dir: '/tmp/x', keep: false } })).toThrow(/never removed/);
    expect(() => createHarness({ backend, workspace: { keep: 'yes' } as unknown as { keep: boolean } })).toThrow(
      expect.objectContaining({ code: 'invalid-options' }),
    );
    expect(() => createHarness({ backend, onListenerError: 'log' as unknown as () => void })).toThrow(
      expect.objectContaining({ code: 'invalid-options', message: expect.stringContaining('onListenerError') }),
    );
  });

  it('hands a throwing listener’s error and event to onListenerError, and the run goes on', async () => {
    const seen: Array<[unknown, string]> = [];
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const harness = createHarness({
        backend: new ScriptedBackend({ execute: [submit('done')] }),
        workspace: await tempDir(),
        ...quick,
        onListenerError: (error, event) => seen.push([error, event.type]),
      });
      const boom = new Error('listener bug');
      harness.on('run-start', () => {
        throw boom;
      });
      const result = await harness.run(TASK);
      expect(result.status).toBe('succeeded');
      expect(seen).toEqual([[boom, 'run-start']]);
      expect(consoleError).not.toHaveBeenCalled();
    } finally {
      consoleError.mockRestore();
    }
  });

  it('accepts a Workspace object as the workspace option', () => {
    const workspace = { root: '/virtual', resolve: async (p: string) => p } as unknown as Workspace;
    expect(() => createHarness({ backend: new ScriptedBackend([]), workspace })).not.toThrow();
  });
});
