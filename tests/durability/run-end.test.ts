import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { RunSnapshot } from '../../src/durability/types.js';
import { createHarness } from '../../src/harness/harness.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { submit, toolCall } from '../../src/testing/replies.js';
import { hang, tempDir } from '../harness/helpers.js';
import { MemoryRunStore } from './memory-store.js';

/** A store whose every save takes a while, and that knows how many are under way and when the last one settled. */
class SlowStore extends MemoryRunStore {
  inFlight = 0;
  started = 0;
  #settled: Promise<void> = Promise.resolve();
  override save(runId: string, snapshot: RunSnapshot): Promise<void> {
    this.inFlight += 1;
    this.started += 1;
    const saving = (async () => {
      try {
        await sleep(40);
        await super.save(runId, snapshot);
      } finally {
        this.inFlight -= 1;
      }
    })();
    this.#settled = saving.catch(() => undefined);
    return saving;
  }
  /** Resolves once the newest save started so far has settled. */
  settled(): Promise<void> {
    return this.#settled;
  }
}

/** The waiting tool, read-only: its start is saved behind the loop, not waited for. */
const waitForAbort = { ...hang, readOnly: true };

describe('the end of a run with snapshots saved behind it', () => {
  it('returns from an aborted run at once, leaving no save to start after it and a snapshot to resume from', async () => {
    const store = new SlowStore();
    const harness = createHarness({
      backend: new ScriptedBackend({ execute: [toolCall('hang', {}, 'call-hang')] }),
      tools: [waitForAbort],
      decomposition: false,
      verification: false,
      workspace: await tempDir(),
      store,
    });
    const controller = new AbortController();
    harness.on('tool-call', () => controller.abort());
    const result = await harness.run({ task: 'wait', signal: controller.signal });
    expect(result.status).toBe('aborted');
    // An abort does not wait for the store (a stalled one would hold it for storeTimeoutMs): the save under way is
    // given up on, and nothing is written after it.
    const startedByReturn = store.started;
    await store.settled();
    expect(store.inFlight).toBe(0);
    expect(store.started).toBe(startedByReturn);
    // The first snapshot was stored before the first model call, so the aborted run can be resumed.
    expect((await store.load(result.runId))?.status).toBe('running');
  });

  it('returns from a finished run with its finished snapshot stored', async () => {
    const store = new SlowStore();
    const harness = createHarness({
      backend: new ScriptedBackend({ execute: [submit('done')] }),
      decomposition: false,
      verification: false,
      workspace: await tempDir(),
      store,
    });
    const result = await harness.run('answer');
    expect(result.status).toBe('succeeded');
    expect(store.inFlight).toBe(0);
    expect((await store.load(result.runId))?.status).toBe('finished');
  });
});
