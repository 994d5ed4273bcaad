/**
 * Everything a managed run has done so far, in one place: what its snapshots hold and a resumed run starts from.
 * @module
 */
import type { TaskState } from '../../contracts/task-state.js';
import type { Fingerprint } from './integrity.js';
import { newManagedTally, type ManagedTally } from './report.js';
import { fingerprintFromJson, fingerprintToJson, type ManagedPosition, type ManagedSnapshotState } from './snapshot.js';
import { emptyTaskState } from './state.js';
import type { AnsweredQuestion, AuditReport, FinalVerification } from '../../contracts/managed.js';

/** A managed run's progress: its position, the audited state and what the manager and the budgets need next. */
export class ManagedProgress {
  at: ManagedPosition = { stage: 'manage', round: 1 };
  state: TaskState = emptyTaskState();
  /** The workspace fingerprint the next execution's or audit's changes are measured from. */
  fingerprint: Fingerprint = new Map();
  audits: AuditReport[] = [];
  answers: AnsweredQuestion[] = [];
  /** The harness's feedback on the manager's last decision. */
  feedback: string[] = [];
  /** Paths the executors created or changed, for the deliverable. */
  produced = new Set<string>();
  /** The manager's final answer, from its last `done` the completion gate accepted. */
  answer: string | undefined;
  /** Every final verification so far, oldest first. */
  verifications: FinalVerification[] = [];
  /** ReAct iterations of finished executions and audits. */
  iterationsUsed = 0;
  /** The counters of the report's `managed` section. */
  tally: ManagedTally = newManagedTally();

  /** The progress a snapshot saved (a copy: the run changes it in place, never the caller's snapshot). */
  static restore(saved: ManagedSnapshotState): ManagedProgress {
    const copy = structuredClone(saved);
    const progress = new ManagedProgress();
    progress.at = copy.position;
    progress.state = copy.taskState;
    progress.fingerprint = fingerprintFromJson(copy.fingerprint);
    progress.audits = copy.audits;
    progress.answers = copy.answers;
    progress.feedback = copy.feedback;
    progress.produced = new Set(copy.produced);
    progress.answer = copy.answer;
    progress.verifications = copy.verifications;
    progress.iterationsUsed = copy.iterationsUsed;
    progress.tally = copy.tallies.managed;
    return progress;
  }

  /** A snapshot's state of this progress (a copy), with the run's attachments and the host's report tally. */
  toSnapshot<Tally>(attachments: readonly string[], baseTally: Tally): ManagedSnapshotState<Tally> {
    return structuredClone({
      kind: 'managed',
      position: this.at,
      attachments: [...attachments],
      taskState: this.state,
      audits: this.audits,
      answers: this.answers,
      feedback: this.feedback,
      produced: [...this.produced],
      ...(this.answer === undefined ? {} : { answer: this.answer }),
      verifications: this.verifications,
      iterationsUsed: this.iterationsUsed,
      fingerprint: fingerprintToJson(this.fingerprint),
      tallies: { base: baseTally, managed: this.tally },
    });
  }
}
