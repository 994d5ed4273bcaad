/**
 * Sealing a changed snapshot as the harness would have: what a test needs to stand for a snapshot that another
 * library version, or a run under other options, really wrote (an unsealed change is refused as tampered).
 */
import { SnapshotSeal } from '../../src/durability/snapshot-seal.js';
import type { RunSnapshot, RunStore } from '../../src/durability/types.js';

/** `snapshot` sealed with the key a harness without `snapshotKey` uses for its run in `store`. */
export async function resealed(store: RunStore, snapshot: RunSnapshot, snapshotKey?: string): Promise<RunSnapshot> {
  const seal = await SnapshotSeal.forRun({ runId: snapshot.runId, option: snapshotKey, store });
  return seal.seal(snapshot);
}
