import { describe, expect, it } from 'vitest';
import { RedisRunStore } from '../../src/bullmq/redis-run-store.js';
import type { RunSnapshot } from '../../src/durability/types.js';
import { probeRedisServer, useRedisServer } from '../support/redis-server.js';

const probe = probeRedisServer();

function snapshotOf(runId: string, seq: number): RunSnapshot {
  return {
    format: 2,
    library: '0.1.0',
    runId,
    mode: 'pipeline',
    fingerprint: { hash: 'h', fields: { mode: 'pipeline' } },
    savedAt: 1_000 + seq,
    seq,
    status: 'running',
    input: { task: 'write a.md', attachments: [] },
    workspace: '/shared/runs/r',
    dataMark: 'm',
    used: { iterations: seq, elapsedMs: 10 * seq },
    state: { stage: 'execute', done: [1, 2] },
  };
}

describe('redis-server in CI', () => {
  // .ci/run installs redis-server; a silent skip below would hide BullMQ support that was never tested.
  it.runIf(process.env.CI === 'true')('is installed, so the BullMQ tests really run', () => {
    expect(probe.available, probe.reason).toBe(true);
  });
});

describe('RedisRunStore without Redis', () => {
  it('refuses a client that is not ioredis-compatible', () => {
    expect(() => new RedisRunStore({} as never)).toThrowError(expect.objectContaining({ code: 'invalid-options' }));
  });

  it('turns a failing connection into a retryable store-failed naming the run', async () => {
    const broken = {
      get: () => Promise.reject(new Error('ECONNREFUSED 127.0.0.1:1')),
      smembers: () => Promise.reject(new Error('ECONNREFUSED')),
      eval: () => Promise.reject(new Error('ECONNREFUSED 127.0.0.1:1')),
    };
    const store = new RedisRunStore(broken);
    await expect(store.save('run-a', snapshotOf('run-a', 1))).rejects.toMatchObject({
      code: 'store-failed',
      retryable: true,
      message: expect.stringMatching(/save the snapshot of run "run-a".*ECONNREFUSED/),
    });
    await expect(store.load('run-a')).rejects.toMatchObject({ code: 'store-failed' });
  });
});

describe.skipIf(!probe.available)(`RedisRunStore on redis-server (${probe.reason})`, () => {
  const redisServer = useRedisServer();

  it('saves, loads, lists and deletes snapshots as JSON under the prefix', async () => {
    const store = new RedisRunStore(redisServer.redis, { prefix: 'hh-roundtrip' });
    expect(await store.load('run-1')).toBeUndefined();
    await store.save('run-1', snapshotOf('run-1', 1));
    await store.save('run-2', snapshotOf('run-2', 1));
    await store.save('run-1', snapshotOf('run-1', 2));

    expect(await store.load('run-1')).toEqual(snapshotOf('run-1', 2));
    expect(await store.list()).toEqual(['run-1', 'run-2']);
    expect(JSON.parse((await redisServer.redis.get('hh-roundtrip:run:run-1')) ?? 'null')).toMatchObject({ seq: 2 });

    await store.delete('run-1');
    await store.delete('run-never');
    expect(await store.load('run-1')).toBeUndefined();
    expect(await store.list()).toEqual(['run-2']);
  });

  it('reports a value that is not a snapshot instead of handing it to resume', async () => {
    const store = new RedisRunStore(redisServer.redis, { prefix: 'hh-garbage' });
    await redisServer.redis.set('hh-garbage:run:bad', '{not json');
    await expect(store.load('bad')).rejects.toMatchObject({
      code: 'snapshot-corrupt',
      message: /Redis key "hh-garbage:run:bad".*not valid JSON/,
    });
    await redisServer.redis.set('hh-garbage:run:list', '[1,2]');
    await expect(store.load('list')).rejects.toMatchObject({ code: 'snapshot-corrupt', message: /not a JSON object/ });
    await redisServer.redis.set('hh-garbage:run:deep', `${'['.repeat(10_000)}${']'.repeat(10_000)}`);
    await expect(store.load('deep')).rejects.toMatchObject({ code: 'snapshot-corrupt', message: /nests deeper/ });
  });

  it('keeps one snapshot secret per prefix in Redis, the same for every client, made once', async () => {
    const first = new RedisRunStore(redisServer.redis, { prefix: 'hh-secret' });
    const second = new RedisRunStore(redisServer.redis.duplicate(), { prefix: 'hh-secret' });
    const [a, b] = await Promise.all([first.snapshotSecret(), second.snapshotSecret()]);
    expect(Buffer.from(a).toString('hex')).toMatch(/^[0-9a-f]{64}$/);
    expect(Buffer.from(b)).toEqual(Buffer.from(a));
    expect(await redisServer.redis.get('hh-secret:snapshot-secret')).toBe(Buffer.from(a).toString('hex'));
    const other = await new RedisRunStore(redisServer.redis, { prefix: 'hh-other' }).snapshotSecret();
    expect(Buffer.from(other)).not.toEqual(Buffer.from(a));
  });

  it('refuses run ids that break the run-id rule', async () => {
    const store = new RedisRunStore(redisServer.redis, { prefix: 'hh-ids' });
    for (const id of ['../x', 'a/b', 'a:b', '', '.']) {
      await expect(store.save(id, snapshotOf(id, 1))).rejects.toMatchObject({ code: 'invalid-input' });
      await expect(store.load(id)).rejects.toMatchObject({ code: 'invalid-input' });
    }
    expect(await redisServer.redis.keys('hh-ids*')).toEqual([]);
  });

  it('with a fence, saves only while the lock key holds the token, and never overwrites a newer snapshot', async () => {
    const lockKey = 'bull:q:run-f:lock';
    const stale = new RedisRunStore(redisServer.redis, {
      prefix: 'hh-fence',
      fence: { key: lockKey, token: 'worker-a' },
    });
    const current = new RedisRunStore(redisServer.redis, {
      prefix: 'hh-fence',
      fence: { key: lockKey, token: 'worker-b' },
    });

    await redisServer.redis.set(lockKey, 'worker-a', 'PX', 60_000);
    await stale.save('run-f', snapshotOf('run-f', 1));

    // The job stalled and worker B took it over: the lock now holds B's token.
    await redisServer.redis.set(lockKey, 'worker-b', 'PX', 60_000);
    await current.save('run-f', snapshotOf('run-f', 5));
    await expect(stale.save('run-f', snapshotOf('run-f', 2))).rejects.toMatchObject({
      code: 'store-failed',
      retryable: false,
      message: expect.stringContaining(`no longer holds the lock "${lockKey}"`),
    });
    expect(await current.load('run-f')).toMatchObject({ seq: 5 });

    // An expired lock fences everybody out: nobody may write for a job nobody holds.
    await redisServer.redis.del(lockKey);
    await expect(current.save('run-f', snapshotOf('run-f', 6))).rejects.toMatchObject({ code: 'store-failed' });
    expect(await stale.load('run-f')).toMatchObject({ seq: 5 });
  });
});
