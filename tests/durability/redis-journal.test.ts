import { describe, expect, it } from 'vitest';
import { RedisRunStore } from '../../src/bullmq/redis-run-store.js';
import type { HarnessEvent } from '../../src/events.js';
import { collect, tempDir } from '../harness/helpers.js';
import { probeRedisServer, useRedisServer } from '../support/redis-server.js';
import { scenarioHarness, TASK } from './fixtures/scenario.js';
import { journalsStarted, TracedStore } from './traced-store.js';

const probe = probeRedisServer();

describe.skipIf(!probe.available)(`the Redis store's journal (issue 21; ${probe.reason})`, () => {
  const redisServer = useRedisServer();

  /** The scenario on the Redis store, stopped as by a crash right after the line declaring its second write_note. */
  async function crashedRun(prefix: string) {
    const store = new TracedStore(new RedisRunStore(redisServer.redis, { prefix }));
    let declared = 0;
    store.crashAfter = (write) => journalsStarted(write, 'write_note') && ++declared === 2;
    const dir = await tempDir();
    const result = await scenarioHarness(dir, 1, { store }).run({ task: TASK, runId: 'r1' });
    return { dir, result };
  }

  it('declares each side effect with one APPEND, not a whole-snapshot SET, and a SET drops the journal', async () => {
    const store = new TracedStore(new RedisRunStore(redisServer.redis, { prefix: 'hh-journal-ok' }));
    const sideEffects: number[] = [];
    const harness = scenarioHarness(
      await tempDir(),
      1,
      { store },
      {
        onToolStart: (tool) => {
          if (tool === 'write_note') sideEffects.push(store.writes.length);
        },
      },
    );
    expect((await harness.run({ task: TASK, runId: 'r1' })).status).toBe('succeeded');
    expect(sideEffects).toHaveLength(5);
    for (const before of sideEffects) expect(store.writes[before - 1]?.kind).toBe('append');
    // The finished snapshot's SET dropped the journal in the same script.
    expect(await redisServer.redis.exists('hh-journal-ok:journal:r1')).toBe(0);
  });

  it('resumes from the snapshot and its journal in Redis: the declared call is reported interrupted', async () => {
    const { dir, result } = await crashedRun('hh-journal-crash');
    expect(result.error?.code).toBe('store-failed');
    expect(
      (await redisServer.redis.get('hh-journal-crash:journal:r1'))?.split('\n').filter(Boolean).length,
    ).toBeGreaterThan(0);

    const harness = scenarioHarness(dir, 1);
    const events: HarnessEvent[] = collect(harness);
    const resumed = await harness.resume('r1', {
      store: new RedisRunStore(redisServer.redis, { prefix: 'hh-journal-crash' }),
    });
    expect(resumed.status).toBe('succeeded');
    expect(events[0]).toMatchObject({ type: 'run-resume', redo: { interruptedToolCalls: ['write_note'] } });
  });

  it('refuses a forged journal line as snapshot-tampered, naming the Redis key; nothing runs', async () => {
    const { dir } = await crashedRun('hh-journal-forged');
    const key = 'hh-journal-forged:journal:r1';
    const text = (await redisServer.redis.get(key)) as string;
    await redisServer.redis.set(key, text.replaceAll('"readOnly":false', '"readOnly":true'));
    const harness = scenarioHarness(dir, 1);
    const events: HarnessEvent[] = collect(harness);
    const refused = await harness
      .resume('r1', { store: new RedisRunStore(redisServer.redis, { prefix: 'hh-journal-forged' }) })
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({
      code: 'snapshot-tampered',
      message: expect.stringContaining(`Redis key "${key}"`),
    });
    expect(events).toEqual([]);
  });
});
