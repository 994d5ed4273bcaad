import type { ArtifactRecord } from './types.js';

/** The files tools created or changed, keyed by workspace-relative path, most recently changed last. */
export class ArtifactRegistry {
  readonly #records = new Map<string, ArtifactRecord>();

  /** Records a file, moving it to the end when it was known already. */
  record(record: ArtifactRecord): ArtifactRecord {
    this.#records.delete(record.path);
    this.#records.set(record.path, record);
    return record;
  }

  /** The record of one path, if any. */
  get(path: string): ArtifactRecord | undefined {
    return this.#records.get(path);
  }

  /** Every record, most recent last. */
  list(): ArtifactRecord[] {
    return [...this.#records.values()].map((record) => ({ ...record }));
  }
}
