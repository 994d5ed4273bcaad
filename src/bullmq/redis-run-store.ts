/**
 * `RedisRunStore`: run snapshots as JSON strings in Redis, one key per run, each with a journal of the saves since it
 * (one `APPEND` each), and an optional fence that lets only the holder of a lock write.
 * @module
 */
import { assertRunId } from '../durability/run-id.js';
import { snapshotJson } from '../durability/snapshot-json.js';
import { MAX_SNAPSHOT_BYTES, parseSnapshotText, snapshotTooLarge } from '../durability/snapshot-parse.js';
import type { RunSnapshot, RunStore } from '../durability/types.js';
import { HarnessError } from '../errors.js';

/**
 * The few Redis commands the store sends, as an ioredis client (`new Redis(…)`, `redis.duplicate()`) has them.
 * Everything that writes goes through one Lua script, so each write is atomic.
 */
export interface RedisCommandClient {
  get(key: string): Promise<string | null>;
  smembers(key: string): Promise<string[]>;
  eval(script: string, numberOfKeys: number, ...keysAndArgs: Array<string | number>): Promise<unknown>;
}

/**
 * A write fence: a save succeeds only while Redis holds `token` under `key`, checked in the same Lua script that
 * writes. The BullMQ worker fences with the job's lock key and its lock token, so a worker that lost the job can
 * never overwrite the snapshot of the worker that took it over.
 */
export interface WriteFence {
  key: string;
  token: string;
}

/** Options of {@link RedisRunStore}. */
export interface RedisRunStoreOptions {
  /**
   * Start of every key: a run's snapshot is `<prefix>:run:<runId>`, the set of run ids `<prefix>:runs`.
   * @defaultValue 'horizon-harness'
   */
  prefix?: string;
  /** Refuse a save unless the fence's key holds its token (see {@link WriteFence}). */
  fence?: WriteFence;
}

/**
 * SET + SADD + DEL of the run's journal (KEYS[3], which the new snapshot replaces) in one step; with a fence (KEYS[4]),
 * nothing is written unless it holds ARGV[3].
 */
const SAVE_SCRIPT = `
if #KEYS == 4 and redis.call('GET', KEYS[4]) ~= ARGV[3] then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[2], ARGV[2])
redis.call('DEL', KEYS[3])
return 1`;

/** APPEND of journal lines to KEYS[1]; with a fence (KEYS[2]), nothing is written unless it holds ARGV[2]. */
const APPEND_SCRIPT = `
if #KEYS == 2 and redis.call('GET', KEYS[2]) ~= ARGV[2] then return 0 end
redis.call('APPEND', KEYS[1], ARGV[1])
return 1`;

/** The store's snapshot secret: the one kept, else ARGV[1] kept from now on (one step, so racing workers agree). */
const SECRET_SCRIPT = `
local kept = redis.call('GET', KEYS[1])
if kept then return kept end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]`;

/** The snapshot's size first: one too large for a resume to read is not fetched at all. */
const SIZE_SCRIPT = `return redis.call('STRLEN', KEYS[1])`;

const DELETE_SCRIPT = `
redis.call('DEL', KEYS[1], KEYS[3])
redis.call('SREM', KEYS[2], ARGV[1])
return 1`;

/**
 * A {@link RunStore} in Redis: each snapshot is one JSON string (a save replaces it atomically, and drops the run's
 * journal in the same step), the saves between two snapshots are lines appended to the run's journal string
 * (`<prefix>:journal:<runId>`, one `APPEND` each), and a set lists the run ids. Usable on its own with any ioredis-compatible client; `createRunWorker` builds one per job, fenced
 * with the job's lock.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * const store = new RedisRunStore(new Redis('redis://127.0.0.1:6379'));
 * const result = await harness.run({ task: 'Write report.md', runId: 'run-42', store });
 * // later, in this process or another one:
 * await harness.resume('run-42', { store });
 * ```
 */
export class RedisRunStore implements RunStore {
  readonly #client: RedisCommandClient;
  readonly #prefix: string;
  readonly #fence: WriteFence | undefined;

  constructor(client: RedisCommandClient, options: RedisRunStoreOptions = {}) {
    if (typeof client?.eval !== 'function' || typeof client.get !== 'function') {
      throw new HarnessError(
        'invalid-options',
        'RedisRunStore needs an ioredis-compatible client (get, smembers, eval), e.g. new Redis(url) from ioredis.',
      );
    }
    const prefix = options.prefix ?? 'horizon-harness';
    if (!prefix) throw new HarnessError('invalid-options', 'RedisRunStore prefix must be a non-empty string.');
    this.#client = client;
    this.#prefix = prefix;
    this.#fence = options.fence;
  }

  /** The Redis key holding a run's snapshot; the run id must follow the run-id rule (`invalid-input`). */
  keyOf(runId: string): string {
    assertRunId(runId, 'RedisRunStore');
    return `${this.#prefix}:run:${runId}`;
  }

  /** The Redis key holding a run's journal (the saves since its snapshot, one line each): `<prefix>:journal:<runId>`. */
  journalKeyOf(runId: string): string {
    assertRunId(runId, 'RedisRunStore');
    return `${this.#prefix}:journal:${runId}`;
  }

  /** The Redis key holding the secret the store's snapshot keys are derived from: `<prefix>:snapshot-secret`. */
  get secretKey(): string {
    return `${this.#prefix}:snapshot-secret`;
  }

  /**
   * The secret the harness derives the snapshot keys of this store's runs from, kept in Redis at
   * {@link RedisRunStore.secretKey} (made on first use, 32 random bytes): every worker that reaches this Redis
   * server resumes the runs, and code in a run's workspace without access to Redis cannot forge their snapshots.
   */
  async snapshotSecret(): Promise<Uint8Array> {
    const fresh = process.getBuiltinModule('node:crypto').randomBytes(32).toString('hex');
    const kept = await this.#call('read or make the snapshot secret', () =>
      this.#client.eval(SECRET_SCRIPT, 1, this.secretKey, fresh),
    );
    const text = String(kept);
    if (!/^[0-9a-f]{64,}$/.test(text)) {
      throw new HarnessError(
        'store-failed',
        `The value at Redis key "${this.secretKey}" is not a snapshot secret (hex digits). Delete it to have a new one made (snapshots sealed with the old one can then no longer be resumed).`,
      );
    }
    return Buffer.from(text, 'hex');
  }

  async save(runId: string, snapshot: RunSnapshot): Promise<void> {
    const keys = [this.keyOf(runId), this.#indexKey, this.journalKeyOf(runId)];
    const json = snapshotJson(snapshot);
    if (Buffer.byteLength(json) > MAX_SNAPSHOT_BYTES) {
      throw new HarnessError(
        'store-failed',
        `Refused to save the snapshot of run "${runId}": it is ${Buffer.byteLength(json)} bytes, over the limit of ${MAX_SNAPSHOT_BYTES} a resume reads.`,
      );
    }
    const args = [json, runId];
    if (this.#fence) {
      keys.push(this.#fence.key);
      args.push(this.#fence.token);
    }
    const written = await this.#call(`save the snapshot of run "${runId}"`, () =>
      this.#client.eval(SAVE_SCRIPT, keys.length, ...keys, ...args),
    );
    if (Number(written) !== 1) throw this.#fenced(runId);
  }

  /**
   * Appends `lines` to the run's journal with one `APPEND` (fenced like `save`), each followed by a newline: one
   * round trip per save between two snapshots, instead of the whole snapshot (see {@link RunStore.appendJournal}).
   */
  async appendJournal(runId: string, lines: readonly string[]): Promise<void> {
    const keys = [this.journalKeyOf(runId)];
    const args = [lines.map((line) => `${line}\n`).join('')];
    if (this.#fence) {
      keys.push(this.#fence.key);
      args.push(this.#fence.token);
    }
    const written = await this.#call(`append to the journal of run "${runId}"`, () =>
      this.#client.eval(APPEND_SCRIPT, keys.length, ...keys, ...args),
    );
    if (Number(written) !== 1) throw this.#fenced(runId);
  }

  /** The run's journal, its size checked before it is fetched (`snapshot-corrupt` when over the snapshot limit). */
  async loadJournal(runId: string): Promise<string | undefined> {
    return this.#readBounded(this.journalKeyOf(runId), `the journal of run "${runId}"`);
  }

  /**
   * The run's snapshot, read as untrusted input: its size is checked before it is fetched, then it is parsed with
   * bounds (`snapshot-corrupt` for one too large, not JSON or not a snapshot).
   */
  async load(runId: string): Promise<RunSnapshot | undefined> {
    const key = this.keyOf(runId);
    const text = await this.#readBounded(key, `the snapshot of run "${runId}"`);
    if (text === undefined) return undefined;
    return parseSnapshotText(Buffer.from(text, 'utf8'), `Redis key "${key}"`) as unknown as RunSnapshot;
  }

  async list(): Promise<string[]> {
    const ids = await this.#call('list the runs', () => this.#client.smembers(this.#indexKey));
    return [...ids].sort();
  }

  async delete(runId: string): Promise<void> {
    const keys = [this.keyOf(runId), this.#indexKey, this.journalKeyOf(runId)];
    await this.#call(`delete the snapshot of run "${runId}"`, () =>
      this.#client.eval(DELETE_SCRIPT, keys.length, ...keys, runId),
    );
  }

  /** The string at `key`, its size checked first: one too large for a resume to read is not fetched at all. */
  async #readBounded(key: string, what: string): Promise<string | undefined> {
    const size = Number(await this.#call(`measure ${what}`, () => this.#client.eval(SIZE_SCRIPT, 1, key)));
    if (size > MAX_SNAPSHOT_BYTES) throw snapshotTooLarge(`Redis key "${key}"`, size);
    const text = await this.#call(`load ${what}`, () => this.#client.get(key));
    return text === null || text === undefined ? undefined : text;
  }

  #fenced(runId: string): HarnessError {
    return new HarnessError(
      'store-failed',
      `Refused to save the snapshot of run "${runId}": this process no longer holds the lock "${this.#fence?.key}" ` +
        '(it expired or another worker took the job over). The newer snapshot in Redis is kept; this copy of the run stops.',
    );
  }

  get #indexKey(): string {
    return `${this.#prefix}:runs`;
  }

  /** Runs one Redis round trip; a failure of the connection or the server becomes `store-failed` (retryable). */
  async #call<T>(what: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new HarnessError('store-failed', `Could not ${what} in Redis: ${reason}`, {
        cause: error,
        retryable: true,
      });
    }
  }
}
