import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { RunSnapshot } from '../../src/durability/types.js';
import { createHarness } from '../../src/harness/harness.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { submit, toolCall } from '../../src/testing/replies.js';
import { hang, tempDir } from '../harness/helpers.js';
import { MemoryRunStore } from './memory-store.js';

/** A store whose every save takes a while, and that knows how many are under way. */
class SlowStore extends MemoryRunStore {
  inFlight = 0;
  override async save(runId: string, snapshot: RunSnapshot): Promise<void> {
    this.inFlight += 1;
    try {
      await sleep(40);
      await super.save(runId, snapshot);
    } finally {
      this.inFlight -= 1;
    }
  }
}

/** The waiting tool, read-only: its start is saved behind the loop, not waited for. */
const waitForAbort = { ...hang, readOnly: true };

describe('the end of a run with snapshots saved behind it', () => {
  it('returns from an aborted run only once no save is under way', async () => {
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
    expect(store.inFlight).toBe(0);
    expect(store.saves).toBeGreaterThan(0);
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
