import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileRunStore } from '../../src/durability/file-store.js';
import type { RunSnapshot } from '../../src/durability/types.js';

let tmp: string;

beforeEach(async () => {
  tmp = await realpath(await mkdtemp(path.join(tmpdir(), 'hh-file-store-')));
});

afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

function snapshot(runId: string, note = 'first'): RunSnapshot {
  return {
    format: 2,
    library: '0.0.0-test',
    runId,
    mode: 'pipeline',
    fingerprint: { hash: 'h', fields: { mode: 'pipeline' } },
    savedAt: 1,
    seq: 7,
    status: 'running',
    input: { task: 'a task', attachments: [] },
    workspace: tmp,
    dataMark: '0123456789abcdef',
    used: { iterations: 3, elapsedMs: 1200 },
    state: { note },
  };
}

async function rejection(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('expected a rejection');
}

describe('FileRunStore.inWorkspace', () => {
  it('round-trips one run in .harness/run.json and lists it', async () => {
    const store = FileRunStore.inWorkspace(tmp);
    expect(await store.list()).toEqual([]);
    expect(await store.load('run-1')).toBeUndefined();
    await store.save('run-1', snapshot('run-1'));
    await store.save('run-1', snapshot('run-1', 'second'));
    expect(await store.load('run-1')).toEqual(snapshot('run-1', 'second'));
    expect(JSON.parse(await readFile(path.join(tmp, '.harness', 'run.json'), 'utf8')).runId).toBe('run-1');
    expect(await store.list()).toEqual(['run-1']);
    // Another run's id finds nothing and deletes nothing.
    expect(await store.load('run-2')).toBeUndefined();
    await store.delete('run-2');
    expect(await store.list()).toEqual(['run-1']);
    await store.delete('run-1');
    await store.delete('run-1');
    expect(await store.load('run-1')).toBeUndefined();
    expect(await store.list()).toEqual([]);
  });

  it('refuses a symbolic link planted at .harness, neither writing nor reading through it', async () => {
    const outside = path.join(tmp, 'outside');
    const workspace = path.join(tmp, 'ws');
    await mkdir(outside);
    await mkdir(workspace);
    await writeFile(path.join(outside, 'run.json'), JSON.stringify(snapshot('run-1', 'planted')));
    await symlink(outside, path.join(workspace, '.harness'));
    const store = FileRunStore.inWorkspace(workspace);

    const saving = await rejection(store.save('run-1', snapshot('run-1')));
    expect(saving.code).toBe('store-failed');
    expect(saving.message).toContain(path.join(workspace, '.harness', 'run.json'));
    expect(saving.message).toContain('symbolic link');
    expect(JSON.parse(await readFile(path.join(outside, 'run.json'), 'utf8')).state).toEqual({ note: 'planted' });
    expect(await readdir(outside)).toEqual(['run.json']);

    expect((await rejection(store.load('run-1'))).code).toBe('store-failed');
    expect((await rejection(store.list())).code).toBe('store-failed');
  });

  it('refuses a symbolic link planted at run.json, leaving its target alone', async () => {
    const store = FileRunStore.inWorkspace(tmp);
    await store.save('run-1', snapshot('run-1'));
    const target = path.join(tmp, 'elsewhere.json');
    await writeFile(target, JSON.stringify(snapshot('run-1', 'planted')));
    const file = path.join(tmp, '.harness', 'run.json');
    await rm(file);
    await symlink(target, file);

    const saving = await rejection(store.save('run-1', snapshot('run-1', 'second')));
    expect(saving.code).toBe('store-failed');
    expect(saving.message).toContain('symbolic link');
    expect(JSON.parse(await readFile(target, 'utf8')).state).toEqual({ note: 'planted' });
    const loading = await rejection(store.load('run-1'));
    expect(loading.code).toBe('store-failed');
    expect(loading.message).toContain(file);
  });

  it('fails a save with store-failed when a file stands where .harness should be', async () => {
    await writeFile(path.join(tmp, '.harness'), 'not a directory');
    const store = FileRunStore.inWorkspace(tmp);
    const saving = await rejection(store.save('run-1', snapshot('run-1')));
    expect(saving.code).toBe('store-failed');
    expect(saving.message).toContain(path.join(tmp, '.harness', 'run.json'));
    expect(saving.message).toMatch(/previous snapshot there is intact/);
    expect(await readFile(path.join(tmp, '.harness'), 'utf8')).toBe('not a directory');
  });

  it('is not confused by the temp file of a save that crashed before its rename', async () => {
    const store = FileRunStore.inWorkspace(tmp);
    await mkdir(path.join(tmp, '.harness'));
    await writeFile(path.join(tmp, '.harness', '.run.json.0badf00d.tmp'), '{"runId": "run-1", "stat');
    expect(await store.load('run-1')).toBeUndefined();
    expect(await store.list()).toEqual([]);
    await store.save('run-1', snapshot('run-1'));
    await writeFile(path.join(tmp, '.harness', '.run.json.deadbeef.tmp'), '{"runId": "run-1", "sta');
    expect(await store.load('run-1')).toEqual(snapshot('run-1'));
    expect(await store.list()).toEqual(['run-1']);
  });

  it('fails load with snapshot-corrupt naming the file when it is not JSON or not a snapshot', async () => {
    await mkdir(path.join(tmp, '.harness'));
    const file = path.join(tmp, '.harness', 'run.json');
    const store = FileRunStore.inWorkspace(tmp);
    await writeFile(file, '{"runId": "run-1", "state": {');
    const broken = await rejection(store.load('run-1'));
    expect(broken.code).toBe('snapshot-corrupt');
    expect(broken.message).toContain(file);
    expect(broken.message).toContain('not valid JSON');
    await writeFile(file, '[1, 2]');
    expect((await rejection(store.load('run-1'))).message).toContain('not a JSON object');
    await writeFile(file, '{"state": {}}');
    expect((await rejection(store.load('run-1'))).message).toContain('no "runId"');
    // Deleting is how one gets rid of a broken snapshot.
    await store.delete('run-1');
    expect(existsSync(file)).toBe(false);
  });

  // Tests run as root in CI, where permissions do not stop writes: a file-size limit does (EFBIG, like a full disk).
  it.skipIf(process.platform === 'win32')(
    'keeps the previous snapshot intact and loadable when a save fails while writing',
    async () => {
      const store = FileRunStore.inWorkspace(tmp);
      await store.save('run-1', snapshot('run-1'));
      const child = path.join(tmp, 'big-save.mjs');
      const storeModule = pathToFileURL(path.resolve('src/durability/file-store.ts')).href;
      await writeFile(
        child,
        `process.on('SIGXFSZ', () => {});
const { FileRunStore } = await import(${JSON.stringify(storeModule)});
const store = FileRunStore.inWorkspace(${JSON.stringify(tmp)});
const big = ${JSON.stringify(snapshot('run-1', 'second'))};
big.state = { note: 'second', padding: 'x'.repeat(2_000_000) };
try { await store.save('run-1', big); console.log(JSON.stringify({ saved: true })); }
catch (error) { console.log(JSON.stringify({ code: error.code, message: error.message })); }`,
      );
      const tsx = pathToFileURL(path.resolve('node_modules/tsx/dist/esm/index.mjs')).href;
      // 1 MiB in 512- or 1024-byte blocks, depending on the shell: enough for the loader, too little for the save.
      const ran = spawnSync('sh', ['-c', `ulimit -f 2048; exec "${process.execPath}" --import ${tsx} ${child}`], {
        encoding: 'utf8',
      });
      const outcome = JSON.parse(ran.stdout.trim().split('\n').at(-1) ?? '{}');
      expect(outcome.code, ran.stderr).toBe('store-failed');
      expect(outcome.message).toContain(path.join(tmp, '.harness', 'run.json'));
      expect(outcome.message).toContain('previous snapshot there is intact');
      expect(await store.load('run-1')).toEqual(snapshot('run-1'));
      expect(await readdir(path.join(tmp, '.harness'))).toEqual(['run.json']);
    },
  );
});

describe('new FileRunStore({ dir })', () => {
  it('keeps many runs in one directory, created when missing', async () => {
    const dir = path.join(tmp, 'runs', 'nested');
    const store = new FileRunStore({ dir });
    expect(await store.list()).toEqual([]);
    expect(await store.load('a')).toBeUndefined();
    for (const id of ['a', 'b', 'c']) await store.save(id, snapshot(id, `note ${id}`));
    expect((await store.list()).sort()).toEqual(['a', 'b', 'c']);
    expect(await store.load('b')).toEqual(snapshot('b', 'note b'));
    await store.delete('b');
    await store.delete('b');
    expect((await store.list()).sort()).toEqual(['a', 'c']);
  });

  it('refuses run ids that break the run-id rule, before touching the disk', async () => {
    const dir = path.join(tmp, 'runs');
    const store = new FileRunStore({ dir });
    for (const id of ['../x', '/', '..', '.', 'a/../../b', 'a\u0000b', '\\..\\y', 'über', '-x', 'a:b']) {
      const saving = await rejection(store.save(id, snapshot(id)));
      expect(saving.code, id).toBe('invalid-input');
      expect(saving.message).toContain('letters, digits');
      expect((await rejection(store.load(id))).code).toBe('invalid-input');
      expect((await rejection(store.delete(id))).code).toBe('invalid-input');
    }
    expect(await readdir(tmp)).toEqual([]);
  });

  it('keeps run ids that differ only in case or by a dot each in its own file', async () => {
    const dir = path.join(tmp, 'runs');
    const store = new FileRunStore({ dir });
    const ids = ['Run-A', 'run-a', 'x.json', 'x_json', 'a..b'];
    for (const id of ids) await store.save(id, snapshot(id, `note of ${id}`));
    expect((await store.list()).sort()).toEqual([...ids].sort());
    for (const id of ids) expect((await store.load(id))?.state).toEqual({ note: `note of ${id}` });
    expect((await readdir(tmp)).sort()).toEqual(['runs']);
    expect(await readdir(dir)).toHaveLength(ids.length);
    for (const id of ids) await store.delete(id);
    expect(await readdir(dir)).toEqual([]);
  });

  it('refuses an empty or malformed run id', async () => {
    const store = new FileRunStore({ dir: tmp });
    expect((await rejection(store.save('', snapshot('')))).code).toBe('invalid-input');
    expect((await rejection(store.load('\uD800'))).code).toBe('invalid-input');
    expect((await rejection(store.load('x'.repeat(129)))).code).toBe('invalid-input');
    expect((await rejection(store.load('X'.repeat(100)))).code).toBe('invalid-input');
  });

  it('lists neither temp files of a crashed save nor files it did not name', async () => {
    const store = new FileRunStore({ dir: tmp });
    await store.save('run-1', snapshot('run-1'));
    await writeFile(path.join(tmp, '.run-1.json.0badf00d.tmp'), '{"runId":');
    await writeFile(path.join(tmp, 'README.md'), 'notes');
    await writeFile(path.join(tmp, 'Upper.json'), '{}');
    expect(await store.list()).toEqual(['run-1']);
    expect(await store.load('run-1')).toEqual(snapshot('run-1'));
  });

  it('refuses a snapshot file that holds another run, and a save under another run id', async () => {
    const store = new FileRunStore({ dir: tmp });
    await store.save('run-1', snapshot('run-1'));
    await writeFile(path.join(tmp, 'run-2.json'), JSON.stringify(snapshot('run-1')));
    const loading = await rejection(store.load('run-2'));
    expect(loading.code).toBe('store-failed');
    expect(loading.message).toContain(path.join(tmp, 'run-2.json'));
    expect((await rejection(store.save('run-3', snapshot('run-1')))).code).toBe('invalid-input');
  });

  it('fails with store-failed when the directory cannot be made', async () => {
    await writeFile(path.join(tmp, 'file'), 'x');
    const store = new FileRunStore({ dir: path.join(tmp, 'file', 'runs') });
    const saving = await rejection(store.save('run-1', snapshot('run-1')));
    expect(saving.code).toBe('store-failed');
    expect(saving.message).toContain(path.join(tmp, 'file', 'runs'));
  });
});
