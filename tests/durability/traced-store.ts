/**
 * A store that passes everything to another one, journal included, and records every write it is asked for: for tests
 * that look at how a run stores its state (whole snapshots or journal lines) and stop it at a chosen write.
 */
import type { RunSnapshot, RunStore } from '../../src/durability/types.js';

/** One write a run asked for: a whole snapshot, or journal lines; `failed` when it was refused. */
export type Write =
  | { kind: 'save'; snapshot: RunSnapshot; failed: boolean }
  | { kind: 'append'; lines: string[]; failed: boolean };

export class TracedStore implements RunStore {
  readonly writes: Write[] = [];
  /**
   * Once a stored write matches, every later write fails: the inner store then holds what a crash right after that
   * write would have left.
   */
  crashAfter: ((write: Write) => boolean) | undefined;
  #crashed = false;

  constructor(readonly inner: RunStore) {}

  async save(runId: string, snapshot: RunSnapshot): Promise<void> {
    await this.#write({ kind: 'save', snapshot: structuredClone(snapshot), failed: false }, () =>
      this.inner.save(runId, snapshot),
    );
  }

  async appendJournal(runId: string, lines: readonly string[]): Promise<void> {
    const append = this.inner.appendJournal?.bind(this.inner);
    if (!append) throw new Error('the inner store keeps no journal');
    await this.#write({ kind: 'append', lines: [...lines], failed: false }, () => append(runId, lines));
  }

  loadJournal(runId: string): Promise<string | undefined> {
    return this.inner.loadJournal?.(runId) ?? Promise.resolve(undefined);
  }

  load(runId: string) {
    return this.inner.load(runId);
  }
  list() {
    return this.inner.list();
  }
  delete(runId: string) {
    return this.inner.delete(runId);
  }
  snapshotSecret() {
    return this.inner.snapshotSecret?.() ?? Promise.resolve(undefined);
  }

  /** Whether every write from now on fails. */
  get crashed(): boolean {
    return this.#crashed;
  }

  /** Fails every later write, as a process that died would never make them. */
  crash(): void {
    this.#crashed = true;
  }

  /** The writes of one kind. */
  of<K extends Write['kind']>(kind: K): Array<Extract<Write, { kind: K }>> {
    return this.writes.filter((write): write is Extract<Write, { kind: K }> => write.kind === kind);
  }

  async #write(write: Write, perform: () => Promise<void>): Promise<void> {
    this.writes.push(write);
    if (this.#crashed) {
      write.failed = true;
      throw new Error('simulated crash: the process is gone');
    }
    try {
      await perform();
    } catch (error) {
      write.failed = true;
      throw error;
    }
    if (this.crashAfter?.(write)) this.#crashed = true;
  }
}

/** The entries of journal lines, parsed (their `loops` carry each changed loop's `toolCalls`). */
export function entriesOf(lines: readonly string[]): Array<{
  base: string;
  n: number;
  seq: number;
  loops: Array<{ scope: string; toolCalls?: Array<{ toolName: string; state: string }> }>;
}> {
  return lines.map((line) => JSON.parse(line));
}

/** Whether `write` journals a started, unfinished call of `toolName` (in a snapshot's loops or a journal entry). */
export function journalsStarted(write: Write, toolName: string): boolean {
  const loops =
    write.kind === 'save' ? (write.snapshot.loops ?? []) : entriesOf(write.lines).flatMap((entry) => entry.loops);
  return loops.some((loop) =>
    (loop.toolCalls ?? []).some((call) => call.toolName === toolName && call.state === 'started'),
  );
}
