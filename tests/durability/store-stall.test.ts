import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunSnapshot } from '../../src/durability/types.js';
import { createHarness } from '../../src/harness/harness.js';
import type { HarnessOptions } from '../../src/modes/shared/options.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { submit, toolCall } from '../../src/testing/replies.js';
import { collect, tempDir, writeFile } from '../harness/helpers.js';
import { decide } from '../managed/helpers.js';
import { MemoryRunStore } from './memory-store.js';

/**
 * A store that stops answering (a stalled Redis under `maxRetriesPerRequest: null`, a hung network file system): once
 * `stalled`, every save and load it is asked for never settles.
 */
class StalledStore extends MemoryRunStore {
  stalled = true;
  pending = 0;
  /** Called with each save that will never settle, once it is under way. */
  onStall: (() => void) | undefined;
  override save(runId: string, snapshot: RunSnapshot): Promise<void> {
    if (!this.stalled) return super.save(runId, snapshot);
    this.pending += 1;
    queueMicrotask(() => this.onStall?.());
    return new Promise(() => undefined);
  }
  override load(runId: string): Promise<RunSnapshot | undefined> {
    if (!this.stalled) return super.load(runId);
    this.pending += 1;
    return new Promise(() => undefined);
  }
}

/** A one-subtask run whose first reply calls a tool that is not read-only: the loop must wait for its journal save. */
async function stalledRun(store: StalledStore, options: Partial<HarnessOptions> = {}) {
  return createHarness({
    backend: new ScriptedBackend({
      execute: [toolCall('write_file', { path: 'a.md', content: 'a' }, 'call-1'), submit('done', ['a.md'])],
    }),
    tools: [writeFile],
    decomposition: false,
    verification: false,
    workspace: await tempDir(),
    store,
    ...options,
  });
}

describe('a store whose saves never settle (issue 22)', () => {
  it('a run with limits.timeoutMs ends with timeout, the tool never run, and says the snapshot was not saved', async () => {
    const store = new StalledStore();
    const harness = await stalledRun(store, { limits: { timeoutMs: 300 } });
    const events = collect(harness);
    const result = await harness.run('write a.md');
    expect(result.status).toBe('timeout');
    expect(existsSync(path.join(result.workspace, 'a.md'))).toBe(false);
    expect(events).toContainEqual(expect.objectContaining({ type: 'run-warning', code: 'snapshot-save-failed' }));
    expect(store.pending).toBeGreaterThan(0);
  });

  it('an aborted run ends aborted once its signal aborts', async () => {
    const store = new StalledStore();
    const harness = await stalledRun(store);
    const controller = new AbortController();
    // The run's first snapshot is saved before its first model call: the run waits on it when the signal aborts.
    store.onStall = () => controller.abort();
    const result = await harness.run({ task: 'write a.md', signal: controller.signal });
    expect(result.status).toBe('aborted');
    expect(store.pending).toBeGreaterThan(0);
  });

  it('harness.close() ends the run and settles', async () => {
    const store = new StalledStore();
    const harness = await stalledRun(store);
    let closing: Promise<unknown> | undefined;
    store.onStall = () => {
      closing ??= harness.close();
    };
    const result = await harness.run('write a.md');
    expect(result.status).toBe('aborted');
    await expect(closing).resolves.toBeDefined();
  });

  it('without any other limit, the store timeout ends the run failed with store-failed naming storeTimeoutMs', async () => {
    const store = new StalledStore();
    const harness = await stalledRun(store, { storeTimeoutMs: 100 });
    const result = await harness.run('write a.md');
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('store-failed');
    expect(result.error?.message).toContain('storeTimeoutMs (100 ms)');
    expect(existsSync(path.join(result.workspace, 'a.md'))).toBe(false);
  });

  it('with durability sync, a timed-out run ends with timeout at a stage save', async () => {
    const store = new StalledStore();
    const harness = await stalledRun(store, { durability: 'sync', limits: { timeoutMs: 300 } });
    const result = await harness.run('write a.md');
    expect(result.status).toBe('timeout');
  });

  it('a managed run with limits.timeoutMs ends with timeout', async () => {
    const store = new StalledStore();
    const harness = createHarness({
      backend: new ScriptedBackend({ manage: [decide('done')] }),
      mode: 'managed',
      workspace: await tempDir(),
      store,
      limits: { timeoutMs: 300 },
    });
    const result = await harness.run('anything');
    expect(result.status).toBe('timeout');
  });

  it('resume() with a load that never settles: the signal, close() and the store timeout each end it', async () => {
    const store = new StalledStore();
    const harness = await stalledRun(store, { storeTimeoutMs: 100 });
    await expect(harness.resume('r1')).rejects.toMatchObject({
      code: 'store-failed',
      message: expect.stringContaining('storeTimeoutMs (100 ms)'),
    });
    const patient = await stalledRun(store);
    const controller = new AbortController();
    const aborted = patient.resume('r1', { signal: controller.signal });
    controller.abort();
    await expect(aborted).rejects.toMatchObject({ code: 'aborted' });
    const closed = patient.resume('r1');
    const closing = patient.close();
    await expect(closed).rejects.toMatchObject({ code: 'aborted' });
    await closing;
  });
});
