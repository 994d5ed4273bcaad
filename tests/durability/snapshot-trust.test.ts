import { chmod, mkdir, open, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileRunStore } from '../../src/durability/file-store.js';
import type { RunSnapshot } from '../../src/durability/types.js';
import { HarnessError } from '../../src/errors.js';
import type { HarnessEvent } from '../../src/events.js';
import { collect, tempDir } from '../harness/helpers.js';
import { scenarioHarness, TASK } from './fixtures/scenario.js';
import { MemoryRunStore } from './memory-store.js';
import { resealed } from './reseal.js';

const LATENCY = 1;
const KEY = 'the host secret of this test, 32 bytes or more';

function runFile(dir: string): string {
  return path.join(dir, '.harness', 'run.json');
}

/** What a resume that must refuse gave: its error, and whether anything ran (events, model calls). */
async function refusal(dir: string, runId: string, extra: Parameters<typeof scenarioHarness>[2] = {}) {
  const harness = scenarioHarness(dir, LATENCY, extra);
  const events: HarnessEvent[] = collect(harness);
  const error = await harness.resume(runId, { workspace: dir }).then(
    (result) => new Error(`resumed: ${JSON.stringify(result.status)}`),
    (e: unknown) => e,
  );
  await harness.close();
  return { error: error as HarnessError, events };
}

/**
 * A run stopped by a crash while a write_note call ran: its snapshot (sealed by the harness) journals the call as
 * started, in the run's workspace as `.harness/run.json`.
 */
async function crashedInWrite(dir: string, runId = 'r1') {
  const store = new MemoryRunStore();
  store.freezeWhen = (s) =>
    s.loops?.some((loop) => loop.toolCalls.some((c) => c.toolName === 'write_note' && c.state === 'started')) ?? false;
  await scenarioHarness(dir, LATENCY, { store }).run({ task: TASK, runId });
  const json = store.snapshots.get(runId) as string;
  await writeFile(runFile(dir), json);
  return JSON.parse(json) as RunSnapshot;
}

const savedEnv = process.env.HORIZON_HARNESS_STATE_DIR;
afterEach(() => {
  process.env.HORIZON_HARNESS_STATE_DIR = savedEnv;
});

describe('a resume refuses a snapshot the harness did not write', () => {
  const forgeries: Array<[string, (s: RunSnapshot, dir: string) => unknown]> = [
    [
      'a forged finished result',
      (s) => {
        const { loops: _loops, mac, ...rest } = s;
        return { ...rest, status: 'finished', result: { runId: s.runId, status: 'succeeded' }, mac };
      },
    ],
    [
      'a tool call the model never made',
      (s) => {
        const loop = s.loops?.[0];
        loop?.toolCalls.push({
          callId: 'forged',
          toolName: 'write_note',
          arguments: '{"path":"x.md","text":"x"}',
          readOnly: true,
          state: 'started',
        });
        return s;
      },
    ],
    [
      'a write call marked read-only, to have it run again',
      (s) => {
        for (const entry of s.loops?.[0]?.toolCalls ?? []) entry.readOnly = true;
        return s;
      },
    ],
    ['the run moved to another directory', (s, dir) => ({ ...s, workspace: path.join(dir, 'elsewhere') })],
    [
      'host files to copy in as attachments',
      (s) => ({
        ...s,
        input: { ...s.input, attachments: ['/etc/hostname'] },
        state: { ...(s.state as object), attachments: null },
      }),
    ],
    [
      'its seal removed',
      (s) => {
        const { mac: _mac, ...rest } = s;
        return rest;
      },
    ],
  ];

  it.each(forgeries)('%s: snapshot-tampered naming the file; nothing runs', async (_label, forge) => {
    const dir = await tempDir();
    const genuine = await crashedInWrite(dir);
    const forged = JSON.stringify(forge(structuredClone(genuine), dir));
    await writeFile(runFile(dir), forged);

    const { error, events } = await refusal(dir, 'r1');
    expect(HarnessError.isInstance(error) && error.code, error.message).toBe('snapshot-tampered');
    expect(error.message).toContain(runFile(dir));
    expect(events).toEqual([]);
    expect(await readFile(runFile(dir), 'utf8')).toBe(forged);
    expect(await readdir(dir)).not.toContain('elsewhere');
  });

  it("refuses another run's genuine snapshot put in its place", async () => {
    const dir = await tempDir();
    const other = await crashedInWrite(await tempDir(), 'other');
    await crashedInWrite(dir);
    await writeFile(runFile(dir), JSON.stringify({ ...other, runId: 'r1' }));
    const { error } = await refusal(dir, 'r1');
    expect(error.code).toBe('snapshot-tampered');
  });

  it('takes which journaled calls are read-only from the tools, not from the snapshot', async () => {
    const dir = await tempDir();
    const genuine = await crashedInWrite(dir);
    // Sealed with the run's own key: a snapshot the harness could have written, but claiming the write is read-only.
    for (const entry of genuine.loops?.[0]?.toolCalls ?? []) entry.readOnly = true;
    await writeFile(runFile(dir), JSON.stringify(await resealed(FileRunStore.inWorkspace(dir), genuine)));
    const harness = scenarioHarness(dir, LATENCY);
    const events = collect(harness);
    const result = await harness.resume('r1', { workspace: dir });
    expect(result.status).toBe('succeeded');
    expect(events[0]).toMatchObject({
      type: 'run-resume',
      redo: { rerunToolCalls: [], interruptedToolCalls: ['write_note'] },
    });
    const firstResult = events.find((e) => e.type === 'tool-result' && e.toolName === 'write_note');
    expect(firstResult).toMatchObject({ isError: true });
  });

  it('a snapshot of the earlier unsealed format is resume-incompatible, not applied', async () => {
    const dir = await tempDir();
    const genuine = await crashedInWrite(dir);
    const { mac: _mac, ...unsealed } = genuine;
    await writeFile(runFile(dir), JSON.stringify({ ...unsealed, format: 1 }));
    const { error, events } = await refusal(dir, 'r1');
    expect(error.code).toBe('resume-incompatible');
    expect(error.message).toContain('format: snapshot 1, now 2');
    expect(events).toEqual([]);
  });
});

describe('a snapshot is untrusted input', () => {
  it('a truncated snapshot is snapshot-corrupt naming the file, never a stack trace', async () => {
    const dir = await tempDir();
    await crashedInWrite(dir);
    const text = await readFile(runFile(dir), 'utf8');
    await writeFile(runFile(dir), text.slice(0, Math.floor(text.length / 2)));
    const { error, events } = await refusal(dir, 'r1');
    expect(error.code).toBe('snapshot-corrupt');
    expect(error.message).toContain(runFile(dir));
    expect(error.message).toContain('not valid JSON');
    expect(events).toEqual([]);
  });

  it('a snapshot over the size limit is refused by its size, before it is read', async () => {
    const dir = await tempDir();
    await crashedInWrite(dir);
    // 65 MiB without writing them: a sparse file; reading it would take the heap a 100 MB forgery took.
    const handle = await open(runFile(dir), 'r+');
    await handle.truncate(65 * 1024 * 1024);
    await handle.close();
    const { error } = await refusal(dir, 'r1');
    expect(error.code).toBe('snapshot-corrupt');
    expect(error.message).toContain(`${65 * 1024 * 1024} bytes, over the limit of ${64 * 1024 * 1024} bytes`);
  });

  it.each([
    [
      'nests too deep',
      (s: string) => `${s.slice(0, -1)},"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
      /nests deeper than 64/,
    ],
    [
      'holds millions of small objects',
      (s: string) => `${s.slice(0, -1)},"x":[${'{},'.repeat(1_100_000)}{}]}`,
      /more than 1000000 objects/,
    ],
    ['holds a __proto__ key', (s: string) => `${s.slice(0, -1)},"__proto__":{"polluted":true}}`, /"__proto__" key/],
    [
      'holds a constructor gadget',
      (s: string) => `${s.slice(0, -1)},"constructor":{"prototype":{}}}`,
      /"(prototype|constructor)" key/,
    ],
  ] as const)('a snapshot that %s is snapshot-corrupt', async (_label, change, reason) => {
    const dir = await tempDir();
    await crashedInWrite(dir);
    const text = (await readFile(runFile(dir), 'utf8')).trim();
    await writeFile(runFile(dir), change(text));
    const { error } = await refusal(dir, 'r1');
    expect(error.code).toBe('snapshot-corrupt');
    expect(error.message).toMatch(reason);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a sealed snapshot with a field this version does not write is snapshot-corrupt, naming the field', async () => {
    const dir = await tempDir();
    const genuine = await crashedInWrite(dir);
    const extra = { ...genuine, injected: 'x' } as RunSnapshot;
    await writeFile(runFile(dir), JSON.stringify(await resealed(FileRunStore.inWorkspace(dir), extra)));
    const { error } = await refusal(dir, 'r1');
    expect(error.code).toBe('snapshot-corrupt');
    expect(error.message).toContain('injected');
  });
});

describe('where the snapshot key lives', () => {
  it('the per-user key file is private to its user, made once, and refused when others may read it', async () => {
    const state = await tempDir();
    process.env.HORIZON_HARNESS_STATE_DIR = path.join(state, 'horizon');
    const dir = await tempDir();
    const result = await scenarioHarness(dir, LATENCY).run({ task: TASK, runId: 'k1' });
    expect(result.status).toBe('succeeded');
    const keyFile = path.join(state, 'horizon', 'snapshot-secret');
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    expect((await stat(path.join(state, 'horizon'))).mode & 0o777).toBe(0o700);
    // The finished run's saved result comes back: the same key checks it.
    expect((await scenarioHarness(dir, LATENCY).resume('k1', { workspace: dir })).status).toBe('succeeded');

    // A key file others may read (planted, or copied carelessly) is never used.
    const planted = path.join(state, 'planted');
    await mkdir(planted, { mode: 0o700 });
    await writeFile(path.join(planted, 'snapshot-secret'), `${'ab'.repeat(32)}\n`);
    await chmod(path.join(planted, 'snapshot-secret'), 0o644);
    process.env.HORIZON_HARNESS_STATE_DIR = planted;
    const refused = await scenarioHarness(await tempDir(), LATENCY)
      .run({ task: TASK, runId: 'k2' })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'invalid-options', message: expect.stringContaining('mode 644') });
  });

  it('a run refuses to start when the per-user key file lies inside its workspace', async () => {
    const dir = await tempDir();
    process.env.HORIZON_HARNESS_STATE_DIR = path.join(dir, '.state');
    const refused = await scenarioHarness(dir, LATENCY)
      .run({ task: TASK, runId: 'inside' })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'invalid-options', message: expect.stringContaining('inside the run') });
  });

  it('snapshotKey seals the runs instead: another process with the same key resumes them, one with another key refuses', async () => {
    const dir = await tempDir();
    const store = new MemoryRunStore();
    const first = scenarioHarness(dir, LATENCY, { store, snapshotKey: KEY });
    const controller = new AbortController();
    first.on('plan-created', () => controller.abort());
    await first.run({ task: TASK, runId: 'h1', signal: controller.signal });
    // Another per-user key file: the host's key is what counts.
    process.env.HORIZON_HARNESS_STATE_DIR = path.join(await tempDir(), 'other');
    const wrong = await scenarioHarness(dir, LATENCY, { store, snapshotKey: `${KEY}, but another` })
      .resume('h1')
      .catch((e: unknown) => e);
    expect(wrong).toMatchObject({ code: 'snapshot-tampered', message: expect.stringContaining('snapshotKey option') });
    expect((await scenarioHarness(dir, LATENCY, { store, snapshotKey: KEY }).resume('h1')).status).toBe('succeeded');
  });

  it('refuses a snapshotKey shorter than 32 bytes', () => {
    expect(() => scenarioHarness('/tmp', LATENCY, { snapshotKey: 'short' })).toThrowError(
      expect.objectContaining({ code: 'invalid-options', message: expect.stringContaining('at least 32 bytes') }),
    );
  });

  it('FileRunStore({ dir }) keeps its secret in its directory, where a later process finds it', async () => {
    const runs = await tempDir();
    const dir = await tempDir();
    const store = new FileRunStore({ dir: runs });
    const first = scenarioHarness(dir, LATENCY, { store });
    const controller = new AbortController();
    first.on('plan-created', () => controller.abort());
    await first.run({ task: TASK, runId: 'd1', signal: controller.signal });
    expect((await stat(path.join(runs, '.snapshot-secret'))).mode & 0o777).toBe(0o600);
    expect(await store.list()).toEqual(['d1']);
    process.env.HORIZON_HARNESS_STATE_DIR = path.join(await tempDir(), 'other');
    const again = scenarioHarness(dir, LATENCY, { store: new FileRunStore({ dir: runs }) });
    expect((await again.resume('d1')).status).toBe('succeeded');
  });
});

describe('the run-id rule', () => {
  it.each(['..', '../x', 'a/b', '/etc/x', '.', 'a b', 'ü'])(
    'run() and resume() refuse %j with invalid-input',
    async (runId) => {
      const dir = await tempDir();
      await mkdir(path.join(dir, 'w'));
      const harness = scenarioHarness(path.join(dir, 'w'), LATENCY);
      await expect(harness.run({ task: TASK, runId })).rejects.toMatchObject({
        code: 'invalid-input',
        message: expect.stringContaining('letters, digits'),
      });
      await expect(harness.resume(runId, { workspace: dir })).rejects.toMatchObject({ code: 'invalid-input' });
      expect(await readdir(dir)).toEqual(['w']);
    },
  );
});
