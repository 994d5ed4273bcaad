/** An in-memory RunStore for tests: keeps JSON copies, counts saves, and can be told to fail. */
import type { RunSnapshot, RunStore } from '../../src/durability/types.js';

export class MemoryRunStore implements RunStore {
  readonly snapshots = new Map<string, string>();
  saves = 0;
  /** When set, `save` rejects with this error (after counting the attempt). */
  failSavesWith: Error | undefined;
  /**
   * Once a saved snapshot matches, every later save fails: the store then holds what a crash right after that save
   * would have left.
   */
  freezeWhen: ((snapshot: RunSnapshot) => boolean) | undefined;

  async save(runId: string, snapshot: RunSnapshot): Promise<void> {
    this.saves += 1;
    if (this.failSavesWith) throw this.failSavesWith;
    this.snapshots.set(runId, JSON.stringify(snapshot));
    if (this.freezeWhen?.(snapshot)) this.failSavesWith = new Error('simulated crash');
  }

  async load(runId: string): Promise<RunSnapshot | undefined> {
    const json = this.snapshots.get(runId);
    return json === undefined ? undefined : (JSON.parse(json) as RunSnapshot);
  }

  async list(): Promise<string[]> {
    return [...this.snapshots.keys()];
  }

  async delete(runId: string): Promise<void> {
    this.snapshots.delete(runId);
  }

  /** The stored snapshot, parsed. */
  get(runId: string): RunSnapshot | undefined {
    const json = this.snapshots.get(runId);
    return json === undefined ? undefined : (JSON.parse(json) as RunSnapshot);
  }
}

/** A {@link MemoryRunStore} that keeps a journal too: lines appended after each snapshot, dropped by the next save. */
export class MemoryJournalStore extends MemoryRunStore {
  readonly journals = new Map<string, string>();
  appends = 0;

  override async save(runId: string, snapshot: RunSnapshot): Promise<void> {
    await super.save(runId, snapshot);
    this.journals.delete(runId);
  }

  async appendJournal(runId: string, lines: readonly string[]): Promise<void> {
    this.appends += 1;
    if (this.failSavesWith) throw this.failSavesWith;
    this.journals.set(runId, `${this.journals.get(runId) ?? ''}${lines.map((line) => `${line}\n`).join('')}`);
  }

  async loadJournal(runId: string): Promise<string | undefined> {
    return this.journals.get(runId);
  }

  override async delete(runId: string): Promise<void> {
    await super.delete(runId);
    this.journals.delete(runId);
  }
}
