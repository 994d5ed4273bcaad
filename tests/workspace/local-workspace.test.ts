import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { chmod, link, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HarnessError } from '../../src/errors.js';
import { KEPT_FILE_IDLE_CLOSE_MS } from '../../src/workspace/kept-files.js';
import { LocalWorkspace, type Workspace } from '../../src/workspace/index.js';

let base: string;
let outside: string;
let workspace: LocalWorkspace;

async function listTree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map(String).sort();
}

async function expectRefused(promise: Promise<unknown>, why: RegExp): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(HarnessError.isInstance(error), `expected a HarnessError, got ${String(error)}`).toBe(true);
  expect((error as HarnessError).code).toBe('path-outside-workspace');
  expect((error as HarnessError).message).toMatch(why);
}

beforeEach(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'ws-test-'));
  outside = path.join(base, 'outside');
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), 'top secret');
  workspace = await LocalWorkspace.create({ dir: path.join(base, 'ws'), now: () => 1_000 });
});

afterEach(async () => {
  await workspace.dispose();
  await rm(base, { recursive: true, force: true });
});

describe('LocalWorkspace.create', () => {
  it('creates a missing directory and exposes its real path as root', async () => {
    const nested = path.join(base, 'a', 'b');
    const created = await LocalWorkspace.create({ dir: nested });
    expect(created.root).toBe(path.join(await import('node:fs/promises').then((fs) => fs.realpath(base)), 'a', 'b'));
    expect((await stat(created.root)).isDirectory()).toBe(true);
    expect(created.temporary).toBe(false);
  });

  it('makes a fresh temporary directory when no dir is given and removes it on dispose', async () => {
    const first = await LocalWorkspace.create();
    const second = await LocalWorkspace.create();
    expect(first.root).not.toBe(second.root);
    expect(first.temporary).toBe(true);
    await first.dispose();
    await second.dispose();
    await expect(stat(first.root)).rejects.toThrow();
  });

  it('keeps a named directory on dispose', async () => {
    await workspace.dispose();
    expect((await stat(workspace.root)).isDirectory()).toBe(true);
  });

  it('rejects a previewChars out of range with invalid-options naming the option', async () => {
    const error = await LocalWorkspace.create({ previewChars: 10 }).catch((caught: unknown) => caught);
    expect(HarnessError.isInstance(error) && error.code).toBe('invalid-options');
    expect((error as Error).message).toMatch(/previewChars.*200 to 1000000/);
  });

  it('refuses a dir that is a file', async () => {
    const file = path.join(base, 'file.txt');
    await writeFile(file, 'x');
    await expect(LocalWorkspace.create({ dir: file })).rejects.toMatchObject({ code: 'invalid-options' });
  });
});

describe('path escapes', () => {
  it('refuses ".." segments for reading and writing, also in the middle and with backslashes', async () => {
    await expectRefused(workspace.readFile('../outside/secret.txt'), /"\.\." segments/);
    await expectRefused(workspace.writeFile('../outside/new.txt', 'x', { tool: 't' }), /"\.\." segments/);
    await expectRefused(workspace.writeFile('notes/../../outside/new.txt', 'x', { tool: 't' }), /"\.\." segments/);
    await expectRefused(workspace.writeFile('..\\outside\\new.txt', 'x', { tool: 't' }), /"\.\." segments/);
  });

  it('refuses absolute paths, also ones that point inside the workspace', async () => {
    await expectRefused(workspace.readFile(path.join(outside, 'secret.txt')), /absolute/);
    await expectRefused(workspace.writeFile(path.join(workspace.root, 'a.txt'), 'x', { tool: 't' }), /absolute/);
    await expectRefused(workspace.readFile('C:\\Windows\\win.ini'), /absolute/);
  });

  it('refuses a NUL byte and writing to the workspace directory itself', async () => {
    await expectRefused(workspace.writeFile('a\0.txt', 'x', { tool: 't' }), /NUL/);
    await expectRefused(workspace.writeFile('.', 'x', { tool: 't' }), /workspace directory itself/);
  });

  it('refuses a symlinked file pointing outside', async () => {
    await symlink(path.join(outside, 'secret.txt'), path.join(workspace.root, 'link.txt'));
    await expectRefused(workspace.readFile('link.txt'), /"link\.txt" is a symbolic link that points outside/);
    await expectRefused(workspace.writeFile('link.txt', 'overwritten', { tool: 't' }), /symbolic link/);
    await expectRefused(workspace.preview('link.txt'), /symbolic link/);
  });

  it('refuses a path through a symlinked parent directory pointing outside', async () => {
    await symlink(outside, path.join(workspace.root, 'out'));
    await expectRefused(workspace.readFile('out/secret.txt'), /"out" is a symbolic link/);
    await expectRefused(workspace.writeFile('out/new.txt', 'x', { tool: 't' }), /"out" is a symbolic link/);
    await expectRefused(workspace.writeFile('out/deep/new.txt', 'x', { tool: 't' }), /"out" is a symbolic link/);
    await expectRefused(workspace.recordArtifact('out/secret.txt', { tool: 't' }), /symbolic link/);
  });

  it('refuses a symlink chain that ends outside', async () => {
    await symlink(outside, path.join(workspace.root, 'hop2'));
    await symlink('hop2', path.join(workspace.root, 'hop1'));
    await expectRefused(workspace.readFile('hop1/secret.txt'), /"hop1" is a symbolic link/);
  });

  it('refuses writing through a dangling symlink, inside or outside', async () => {
    await symlink(path.join(outside, 'created-by-link.txt'), path.join(workspace.root, 'dangling-out'));
    await expectRefused(
      workspace.writeFile('dangling-out', 'x', { tool: 't' }),
      /dangling symbolic link that points outside/,
    );
    await symlink('missing-inside.txt', path.join(workspace.root, 'dangling-in'));
    await expectRefused(
      workspace.writeFile('dangling-in', 'x', { tool: 't' }),
      /dangling symbolic link; writing through it/,
    );
    await expect(stat(path.join(outside, 'created-by-link.txt'))).rejects.toThrow();
  });

  it('follows symlinks that stay inside the workspace', async () => {
    await workspace.writeFile('real/data.txt', 'inside', { tool: 't' });
    await symlink(path.join(workspace.root, 'real'), path.join(workspace.root, 'alias'));
    expect((await workspace.readFile('alias/data.txt')).toString()).toBe('inside');
    const record = await workspace.writeFile('alias/data.txt', 'changed', { tool: 't' });
    expect(record.path).toBe('real/data.txt');
    expect(await readFile(path.join(workspace.root, 'real', 'data.txt'), 'utf8')).toBe('changed');
  });

  it('leaves the outside directory untouched after every trick', async () => {
    const before = await listTree(outside);
    await symlink(outside, path.join(workspace.root, 'out'));
    await symlink(path.join(outside, 'secret.txt'), path.join(workspace.root, 'secret-link'));
    await symlink(path.join(outside, 'planted.txt'), path.join(workspace.root, 'plant'));
    const attempts = [
      '../outside/a.txt',
      '../../a.txt',
      path.join(outside, 'b.txt'),
      'out/c.txt',
      'out/sub/d.txt',
      'secret-link',
      'plant',
      './../outside/e.txt',
    ];
    for (const attempt of attempts) {
      await expect(workspace.writeFile(attempt, 'pwned', { tool: 't' })).rejects.toMatchObject({
        code: 'path-outside-workspace',
      });
      await expect(
        workspace.copyIn(path.join(base, 'ws', '..', 'outside', 'secret.txt'), attempt),
      ).rejects.toMatchObject({
        code: 'path-outside-workspace',
      });
    }
    expect(await listTree(outside)).toEqual(before);
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
    expect(workspace.artifacts()).toEqual([]);
  });

  it('refuses a loop of symbolic links with a clear invalid-input error, writing nothing', async () => {
    await symlink('loop-b', path.join(workspace.root, 'loop-a'));
    await symlink('loop-a', path.join(workspace.root, 'loop-b'));
    // Each attempt starts only once the one before was handled: started together, the second could reject while
    // nothing awaited it yet (an unhandled rejection, which failed a loaded CI run).
    const attempts = [
      () => workspace.readFile('loop-a'),
      () => workspace.writeFile('loop-a/x.txt', 'x', { tool: 't' }),
    ];
    for (const attempt of attempts) {
      const error = await attempt().catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'invalid-input' });
      expect((error as Error).message).toContain('"loop-a" is a loop of symbolic links');
    }
    expect(workspace.artifacts()).toEqual([]);
  });

  it('answers exists() with false for escapes instead of throwing', async () => {
    await symlink(outside, path.join(workspace.root, 'out'));
    expect(await workspace.exists('out/secret.txt')).toBe(false);
    expect(await workspace.exists('../outside/secret.txt')).toBe(false);
    await workspace.writeFile('here.txt', 'x', { tool: 't' });
    expect(await workspace.exists('here.txt')).toBe(true);
    expect(await workspace.exists('missing.txt')).toBe(false);
  });
});

describe('writes and the artifact registry', () => {
  it('creates parent directories and records path, size, sha256, tool, scope and time', async () => {
    const record = await workspace.writeFile('reports/q1/summary.md', '# Héllo', {
      tool: 'write_to_file',
      scope: 'subtask-2',
    });
    const bytes = Buffer.from('# Héllo', 'utf8');
    expect(record).toEqual({
      path: 'reports/q1/summary.md',
      size: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      tool: 'write_to_file',
      scope: 'subtask-2',
      updatedAt: 1_000,
    });
    expect(await readFile(path.join(workspace.root, 'reports/q1/summary.md'), 'utf8')).toBe('# Héllo');
    expect(workspace.artifacts()).toEqual([record]);
  });

  it('normalizes "./" and duplicate slashes in recorded paths', async () => {
    const record = await workspace.writeFile('./notes//a.txt', 'x', { tool: 't' });
    expect(record.path).toBe('notes/a.txt');
  });

  it('moves a rewritten file to the end and keeps one record per path', async () => {
    await workspace.writeFile('a.txt', '1', { tool: 't1' });
    await workspace.writeFile('b.txt', '2', { tool: 't1' });
    await workspace.writeFile('a.txt', '333', { tool: 't2', scope: 'repair-1' });
    const records = workspace.artifacts();
    expect(records.map((r) => r.path)).toEqual(['b.txt', 'a.txt']);
    expect(records[1]).toMatchObject({ size: 3, tool: 't2', scope: 'repair-1' });
  });

  it('returns copies so callers cannot change the registry', async () => {
    await workspace.writeFile('a.txt', '1', { tool: 't' });
    const [first] = workspace.artifacts();
    first!.tool = 'tampered';
    expect(workspace.artifacts()[0]!.tool).toBe('t');
  });

  it('writes atomically: no temp files left behind, and an overwrite keeps the permissions', async () => {
    await workspace.writeFile('run.sh', '#!/bin/sh\necho 1\n', { tool: 't' });
    await chmod(path.join(workspace.root, 'run.sh'), 0o755);
    await workspace.writeFile('run.sh', '#!/bin/sh\necho 2\n', { tool: 't' });
    expect((await stat(path.join(workspace.root, 'run.sh'))).mode & 0o777).toBe(0o755);
    expect(await readdir(workspace.root)).toEqual(['run.sh']);
  });

  it('replaces the file instead of rewriting it in place (a hard link to the old file keeps the old bytes)', async () => {
    // An in-place write would change every name of the inode, including this hard link outside the workspace;
    // temp file + rename gives the path a new inode, so a reader holding the old one sees the old content whole.
    await workspace.writeFile('data.csv', 'old,content\n', { tool: 't' });
    const outsideName = path.join(outside, 'hard-link.csv');
    await link(path.join(workspace.root, 'data.csv'), outsideName);
    const before = (await stat(path.join(workspace.root, 'data.csv'))).ino;
    await workspace.writeFile('data.csv', 'new,content\n', { tool: 't' });
    expect(await readFile(path.join(workspace.root, 'data.csv'), 'utf8')).toBe('new,content\n');
    expect((await stat(path.join(workspace.root, 'data.csv'))).ino).not.toBe(before);
    expect(await readFile(outsideName, 'utf8')).toBe('old,content\n');
    expect(await readdir(workspace.root)).toEqual(['data.csv']);
  });

  it('keeps the old content when the write fails, and leaves no temp file', async () => {
    await workspace.writeFile('keep.txt', 'old', { tool: 't' });
    await mkdir(path.join(workspace.root, 'dir'));
    await expect(workspace.writeFile('dir', 'x', { tool: 't' })).rejects.toMatchObject({ code: 'invalid-input' });
    await expect(workspace.writeFile('keep.txt/child.txt', 'x', { tool: 't' })).rejects.toMatchObject({
      code: 'invalid-input',
    });
    expect(await readFile(path.join(workspace.root, 'keep.txt'), 'utf8')).toBe('old');
    expect((await readdir(workspace.root)).sort()).toEqual(['dir', 'keep.txt']);
  });

  it('a reader never sees a half-written file while a large write is in progress', async () => {
    const big = 'x'.repeat(4 * 1024 * 1024);
    await workspace.writeFile('big.txt', 'small', { tool: 't' });
    const writing = workspace.writeFile('big.txt', big, { tool: 't' });
    const seen = new Set<number>();
    for (let i = 0; i < 20; i++) seen.add((await readFile(path.join(workspace.root, 'big.txt'))).length);
    await writing;
    seen.add((await readFile(path.join(workspace.root, 'big.txt'))).length);
    expect([...seen].every((length) => length === 5 || length === big.length)).toBe(true);
  });

  it('recordArtifact hashes a file a process wrote and returns undefined for a missing one', async () => {
    await writeFile(path.join(workspace.root, 'plot.png'), 'not really png');
    const record = await workspace.recordArtifact('plot.png', { tool: 'python_interpreter', scope: 'subtask-1' });
    expect(record).toMatchObject({
      path: 'plot.png',
      size: 14,
      sha256: createHash('sha256').update('not really png').digest('hex'),
      tool: 'python_interpreter',
    });
    expect(await workspace.recordArtifact('nothing.png', { tool: 'python_interpreter' })).toBeUndefined();
    await mkdir(path.join(workspace.root, 'folder'));
    expect(await workspace.recordArtifact('folder', { tool: 'python_interpreter' })).toBeUndefined();
    expect(workspace.artifacts().map((r) => r.path)).toEqual(['plot.png']);
  });

  it('readFile says clearly when a file is missing', async () => {
    const error = await workspace.readFile('nope.txt').catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'invalid-input' });
    expect((error as Error).message).toMatch(/"nope\.txt" does not exist in the workspace/);
  });
});

describe('copyIn', () => {
  it('copies an outside file into attachments/ without recording it as an artifact', async () => {
    const copied = await workspace.copyIn(path.join(outside, 'secret.txt'), 'attachments/secret.txt');
    expect(copied).toBe('attachments/secret.txt');
    expect((await workspace.readFile('attachments/secret.txt')).toString()).toBe('top secret');
    expect(workspace.artifacts()).toEqual([]);
  });

  it('fails clearly when the source cannot be read', async () => {
    const error = await workspace.copyIn(path.join(base, 'missing.pdf'), 'attachments/x.pdf').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'invalid-input' });
    expect((error as Error).message).toMatch(/Cannot read the file to copy/);
  });
});

describe('appendFile', () => {
  const origin = { tool: 'harness', scope: 'subtask-1' };

  it('creates the file and its directories, appends, reports the size, and records no artifact', async () => {
    expect(await workspace.appendFile('.harness/outputs/subtask-1.txt', 'one\n', origin)).toEqual({ size: 4 });
    expect(await workspace.appendFile('.harness/outputs/subtask-1.txt', Buffer.from('twö\n'), origin)).toEqual({
      size: 9,
    });
    expect(await readFile(path.join(workspace.root, '.harness/outputs/subtask-1.txt'), 'utf8')).toBe('one\ntwö\n');
    expect(workspace.artifacts()).toEqual([]);
  });

  it('is part of the Workspace contract, with copyIn', async () => {
    const contract: Workspace = workspace;
    await contract.appendFile('log.txt', 'x', origin);
    expect(await contract.copyIn(path.join(outside, 'secret.txt'), 'attachments/secret.txt', { tool: 'intake' })).toBe(
      'attachments/secret.txt',
    );
    expect((await contract.readFile('attachments/secret.txt')).toString()).toBe('top secret');
  });

  it('refuses paths outside the workspace, as writeFile does', async () => {
    await expectRefused(workspace.appendFile('../outside/secret.txt', 'x', origin), /"\.\." segments/);
    await expectRefused(workspace.appendFile(path.join(outside, 'secret.txt'), 'x', origin), /absolute/);
    await symlink(outside, path.join(workspace.root, 'out'));
    await expectRefused(workspace.appendFile('out/secret.txt', 'x', origin), /"out" is a symbolic link/);
    await symlink(path.join(outside, 'secret.txt'), path.join(workspace.root, 'secret-link'));
    await expectRefused(workspace.appendFile('secret-link', 'x', origin), /symbolic link that points outside/);
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
  });

  it('does not follow a symbolic link as the file itself, even one that stays inside', async () => {
    await workspace.writeFile('notes/real.txt', 'keep', { tool: 't' });
    await symlink(path.join(workspace.root, 'notes/real.txt'), path.join(workspace.root, 'notes/link.txt'));
    const error = await workspace.appendFile('notes/link.txt', 'appended', origin).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'invalid-input' });
    expect((error as Error).message).toContain('"notes/link.txt" is a symbolic link');
    expect(await readFile(path.join(workspace.root, 'notes/real.txt'), 'utf8')).toBe('keep');
  });

  it('follows a symbolic link to a directory inside the workspace, as writeFile does', async () => {
    await mkdir(path.join(workspace.root, 'real'));
    await symlink(path.join(workspace.root, 'real'), path.join(workspace.root, 'alias'));
    await workspace.appendFile('alias/log.txt', 'via alias\n', origin);
    expect(await readFile(path.join(workspace.root, 'real/log.txt'), 'utf8')).toBe('via alias\n');
  });

  it('appends to whatever file its path names now, when the kept file was moved away and replaced', async () => {
    await workspace.appendFile('logs/run.txt', 'first\n', origin);
    await rename(path.join(workspace.root, 'logs/run.txt'), path.join(workspace.root, 'logs/moved.txt'));
    await writeFile(path.join(workspace.root, 'logs/run.txt'), 'replaced\n');
    expect(await workspace.appendFile('logs/run.txt', 'second\n', origin)).toEqual({ size: 16 });
    expect(await readFile(path.join(workspace.root, 'logs/run.txt'), 'utf8')).toBe('replaced\nsecond\n');
    expect(await readFile(path.join(workspace.root, 'logs/moved.txt'), 'utf8')).toBe('first\n');
  });

  it('refuses the next append when the kept file was replaced by a link, or its directory by one leading outside', async () => {
    await workspace.appendFile('logs/run.txt', 'first\n', origin);
    await rm(path.join(workspace.root, 'logs/run.txt'));
    await symlink(path.join(outside, 'secret.txt'), path.join(workspace.root, 'logs/run.txt'));
    await expectRefused(workspace.appendFile('logs/run.txt', 'x', origin), /symbolic link that points outside/);

    await workspace.appendFile('deep/dir/run.txt', 'first\n', origin);
    await rename(path.join(workspace.root, 'deep'), path.join(outside, 'deep'));
    await symlink(path.join(outside, 'deep'), path.join(workspace.root, 'deep'));
    await expectRefused(workspace.appendFile('deep/dir/run.txt', 'x', origin), /"deep" is a symbolic link/);
    expect(await readFile(path.join(outside, 'deep/dir/run.txt'), 'utf8')).toBe('first\n');
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
  });

  it.runIf(existsSync('/proc/self/fd'))(
    'keeps a file open between appends, closing it when idle and on dispose',
    async () => {
      const log = path.join(workspace.root, 'logs/run.txt');
      const openCount = () =>
        readdirSync('/proc/self/fd').filter((fd) => {
          try {
            return readlinkSync(`/proc/self/fd/${fd}`) === log;
          } catch {
            return false;
          }
        }).length;
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      try {
        await workspace.appendFile('logs/run.txt', 'a', origin);
        await workspace.appendFile('logs/run.txt', 'b', origin);
        expect(openCount()).toBe(1);
        vi.advanceTimersByTime(KEPT_FILE_IDLE_CLOSE_MS);
        expect(openCount()).toBe(0);
        await workspace.appendFile('logs/run.txt', 'c', origin);
        expect(openCount()).toBe(1);
        await workspace.dispose();
        expect(openCount()).toBe(0);
      } finally {
        vi.useRealTimers();
      }
      expect(await readFile(log, 'utf8')).toBe('abc');
    },
  );

  it('refuses a directory, a FIFO and a socket without blocking or writing', async () => {
    await mkdir(path.join(workspace.root, 'dir'));
    execFileSync('mkfifo', [path.join(workspace.root, 'pipe')]);
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(path.join(workspace.root, 'sock'), resolve));
    try {
      for (const name of ['dir', 'pipe', 'sock']) {
        const error = await workspace.appendFile(name, 'x', origin).catch((e: unknown) => e);
        expect(error, name).toMatchObject({ code: 'invalid-input' });
        expect((error as Error).message).toContain(`"${name}" is not a regular file`);
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
