/**
 * Sealing snapshots: every snapshot the harness saves carries `mac`, an HMAC-SHA256 of its JSON bytes under a key of
 * its own run, and a resume refuses any snapshot whose `mac` does not match. The run's key is derived from a secret
 * kept outside the workspace (see {@link snapshotSecret}), so code that can write the workspace can change or replace a
 * snapshot but not make one the harness accepts.
 * @module
 */
import { HarnessError } from '../errors.js';
import { registerChunks, snapshotChunks } from './snapshot-json.js';
import { assertOutsideWorkspace, snapshotSecret, type SnapshotSecret } from './snapshot-secret.js';
import type { RunSnapshot, RunStore } from './types.js';

/** Separates the derivation of run keys from any other use of the secret. */
const KEY_CONTEXT = 'horizon-harness/snapshot-key/v1\u0000';
/** Separates the key of a run's journal lines from that of its snapshots: neither passes for the other. */
const JOURNAL_CONTEXT = 'horizon-harness/journal-key/v1';
const MAC = /^[0-9a-f]{64}$/;

/** What a run's seal is made from. @internal */
export interface SealInit {
  runId: string;
  /** The `snapshotKey` option of the harness. */
  option: string | Uint8Array | undefined;
  /** The store the run saves to, or loads from. */
  store: RunStore;
  /** The run's workspace: a key file inside it is refused. Absent at a resume, whose key is only checked. */
  workspaceRoot?: string;
}

/** Seals the snapshots of one run and checks those loaded for it. @internal */
export class SnapshotSeal {
  readonly #key: Buffer;
  readonly #journalKey: Buffer;
  /** Where the secret came from, in words. */
  readonly source: string;
  /** Set when snapshots sealed here can be checked by this process only. */
  readonly warning: string | undefined;

  private constructor(key: Buffer, secret: SnapshotSecret) {
    this.#key = key;
    this.#journalKey = hmac(key, [Buffer.from(JOURNAL_CONTEXT, 'utf8')]);
    this.source = secret.source;
    this.warning = secret.warning;
  }

  /** The seal of `runId`'s snapshots, its key derived from the secret of the harness, the store or the user. */
  static async forRun(init: SealInit): Promise<SnapshotSeal> {
    const secret = await snapshotSecret(init.option, init.store);
    if (init.workspaceRoot !== undefined) await assertOutsideWorkspace(secret, init.workspaceRoot);
    const key = hmac(secret.secret, [Buffer.from(`${KEY_CONTEXT}${init.runId}`, 'utf8')]);
    return new SnapshotSeal(key, secret);
  }

  /**
   * `snapshot` with `mac` added as its last field: the HMAC of `JSON.stringify(snapshot)`'s bytes. The sealed
   * snapshot's own bytes (those bytes with `"mac"` spliced in before the closing brace) are kept for the store's
   * {@link snapshotChunks}, so a save encodes the snapshot once.
   */
  seal(snapshot: RunSnapshot): RunSnapshot {
    const { mac: _stale, ...bare } = snapshot;
    const chunks = snapshotChunks(bare as RunSnapshot);
    const mac = hmac(this.#key, chunks).toString('hex');
    const sealed: RunSnapshot = { ...bare, mac } as RunSnapshot;
    const last = chunks[chunks.length - 1] as Buffer;
    const closed = Buffer.concat([last.subarray(0, last.length - 1), Buffer.from(`,"mac":"${mac}"}`, 'utf8')]);
    registerChunks(sealed, [...chunks.slice(0, -1), closed]);
    return sealed;
  }

  /**
   * One journal line (no newline) of `entry`: its JSON with `mac` added as the last field, the HMAC of the JSON under
   * the run's journal key. Throws what `JSON.stringify` throws (a value that is not plain JSON).
   */
  sealLine(entry: object): string {
    const json = JSON.stringify(entry);
    const mac = hmac(this.#journalKey, [Buffer.from(json, 'utf8')]).toString('hex');
    return `${json.slice(0, -1)},"mac":"${mac}"}`;
  }

  /**
   * Whether the parsed journal line `line` carries the `mac` the run's journal key gives its other fields (their JSON
   * is the very text sealed, as for snapshots: see {@link SnapshotSeal.check}).
   */
  lineIsSealed(line: Record<string, unknown>): boolean {
    const { mac, ...bare } = line;
    if (typeof mac !== 'string' || !MAC.test(mac)) return false;
    const { timingSafeEqual } = process.getBuiltinModule('node:crypto');
    return timingSafeEqual(
      Buffer.from(mac, 'hex'),
      hmac(this.#journalKey, [Buffer.from(JSON.stringify(bare), 'utf8')]),
    );
  }

  /**
   * Throws `snapshot-tampered`, naming `where`, unless `snapshot` carries the `mac` this run's key gives its bytes.
   * The bytes are those of `JSON.stringify` of the snapshot without `mac`: the very bytes sealed, since parsing and
   * encoding again gives back a JSON text that `JSON.stringify` wrote.
   */
  check(snapshot: Record<string, unknown>, runId: string, where: string): void {
    const { mac, ...bare } = snapshot;
    const given = typeof mac === 'string' && MAC.test(mac) ? Buffer.from(mac, 'hex') : undefined;
    const { timingSafeEqual } = process.getBuiltinModule('node:crypto');
    if (given && timingSafeEqual(given, hmac(this.#key, snapshotChunks(bare as unknown as RunSnapshot)))) return;
    throw new HarnessError(
      'snapshot-tampered',
      `The snapshot of run "${runId}" at ${where} was not written by the harness for this run, or was changed since ` +
        `(${given ? 'its seal does not match' : 'it has no seal'}, checked with ${this.source}). Nothing of it was ` +
        'applied. Code that can write there may have forged it: check what ran in the workspace. If the harness did ' +
        'write it, the resuming process has another key: give it the same snapshotKey (or store) as the process that ' +
        'started the run.',
    );
  }
}

function hmac(key: Buffer, chunks: readonly Uint8Array[]): Buffer {
  const mac = process.getBuiltinModule('node:crypto').createHmac('sha256', key);
  for (const chunk of chunks) mac.update(chunk);
  return mac.digest();
}
