/**
 * What a managed run keeps in its snapshots (`RunSnapshot.state` of mode `managed`): the audited task state, where the
 * run is (round and stage, with what that stage goes on from), the manager's inputs, the budgets and fingerprint the
 * next steps compare against, and the report's tallies. Plain JSON; the snapshot, not `.harness/task-state.json`, is
 * what a resume reads.
 * @module
 */
import { resumeRedo } from '../../executor/resume-redo.js';
import type { LoopCheckpoint, ResumeRedo, RunSnapshot } from '../../durability/types.js';
import { HarnessError } from '../../errors.js';
import type { Contract, TaskState } from '../../contracts/task-state.js';
import type { Fingerprint } from './integrity.js';
import type { ManagedReport, ManagedTally } from './report.js';
import type { AnsweredQuestion, AuditReport, ExecutionClaim, FinalVerification } from '../../contracts/managed.js';

/** How the loop ended when it was not stopped. */
export type ManagedEnding =
  | { status: 'succeeded' }
  /** The final verification gave no usable verdict: the deliverable is kept, unchecked. */
  | { status: 'unverified'; message: string }
  | { status: 'blocked'; message: string; blocked: NonNullable<ManagedReport['blocked']> };

/**
 * Where a managed run is: the round, and the stage it goes on with. A stage is saved before it starts, with what it
 * needs, so that a resumed run does it next and never asks again for what an earlier stage decided.
 */
export type ManagedPosition =
  /** The manager decides the round (its decision was not saved yet). */
  | { stage: 'manage'; round: number }
  /** `managed.onAsk` answers the round's question. */
  | { stage: 'ask'; round: number; question: string }
  /**
   * The executor carries out the round's contract. `episodeStarted`: an external agent's episode was started, so its
   * outcome is unknown (it is not started again).
   */
  | { stage: 'execute'; round: number; contract: Contract; episodeStarted?: boolean }
  /**
   * The auditor checks the round's execution, from its start (an audit is never half-applied). `harnessChanged`:
   * `.harness/` paths someone other than the harness changed during the execution (an integrity violation).
   */
  | {
      stage: 'audit';
      round: number;
      contract: Contract;
      claim: ExecutionClaim;
      changedByExecutor: string[];
      harnessChanged?: string[];
    }
  /** The Verifier checks the deliverable after the round's accepted `done` (the final verification). */
  | { stage: 'verify'; round: number }
  /** The loop ended; only the result is left to make. */
  | { stage: 'end'; round: number; ending: ManagedEnding };

/** `RunSnapshot.state` of a managed run. `BaseTally` is the pipeline report's tally the host folds. */
export interface ManagedSnapshotState<BaseTally = unknown> {
  kind: 'managed';
  position: ManagedPosition;
  /** The attachments as copied into the workspace (workspace-relative): a resumed run does not copy them again. */
  attachments: string[];
  /** The audited task state. */
  taskState: TaskState;
  audits: AuditReport[];
  answers: AnsweredQuestion[];
  /** The harness's feedback on the manager's last decision, for the next decision. */
  feedback: string[];
  /** Paths the executors created or changed, for the deliverable. */
  produced: string[];
  /** The manager's final answer, from its last `done` the completion gate accepted. */
  answer?: string;
  /** Every final verification so far, oldest first. */
  verifications: FinalVerification[];
  /** ReAct iterations of finished executions and audits (a loop in progress counts its own). */
  iterationsUsed: number;
  /** The workspace fingerprint the next execution's or audit's changes are measured from: `[path, print]`, sorted. */
  fingerprint: Array<[string, string]>;
  tallies: { base: BaseTally; managed: ManagedTally };
}

/** A fingerprint as JSON. */
export function fingerprintToJson(fingerprint: Fingerprint): Array<[string, string]> {
  return [...fingerprint.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** A fingerprint from its JSON form. */
export function fingerprintFromJson(entries: Array<[string, string]>): Fingerprint {
  return new Map(entries);
}

const STAGES = new Set<ManagedPosition['stage']>(['manage', 'ask', 'execute', 'audit', 'verify', 'end']);

/**
 * Checks that a snapshot's state is a managed run's, as far as the loop relies on it; throws `resume-incompatible`
 * naming what is wrong, so nothing of a foreign or damaged state is applied.
 */
export function readManagedState<BaseTally>(state: unknown): ManagedSnapshotState<BaseTally> {
  const s = state as Partial<ManagedSnapshotState<BaseTally>> | null;
  const problem =
    typeof s !== 'object' || s === null || s.kind !== 'managed'
      ? 'it is not a managed run\'s state (kind "managed")'
      : !s.position || !STAGES.has(s.position.stage) || !Number.isInteger(s.position.round)
        ? 'its position (stage and round) is missing or unknown'
        : !s.taskState || !Array.isArray(s.taskState.records) || !Array.isArray(s.attachments)
          ? 'its task state or attachments are missing'
          : !Array.isArray(s.audits) || !Array.isArray(s.answers) || !Array.isArray(s.feedback)
            ? 'its audits, answers or feedback are missing'
            : !Array.isArray(s.verifications)
              ? 'its final verifications are missing'
              : !Array.isArray(s.produced) || !Array.isArray(s.fingerprint) || !Number.isInteger(s.iterationsUsed)
                ? 'its produced paths, fingerprint or iterations are missing'
                : !s.tallies?.managed
                  ? 'its report tallies are missing'
                  : undefined;
  if (problem) {
    throw new HarnessError(
      'resume-incompatible',
      `The snapshot cannot be resumed in managed mode: ${problem}. Start a new run instead.`,
    );
  }
  return s as ManagedSnapshotState<BaseTally>;
}

/** The executor loop a resumed run goes on with: the snapshot's, when it stopped inside the execution at `position`. */
export function pendingLoop(snapshot: RunSnapshot, position: ManagedPosition): LoopCheckpoint | undefined {
  // Managed mode runs one executor loop at a time: a snapshot holds at most one.
  const loop = snapshot.loops?.[0];
  return position.stage === 'execute' && loop?.scope === `execute-${position.round}` ? loop : undefined;
}

/** What resuming at `position` does again, or hands on as interrupted (see `run-resume`). */
export function redoAt(
  position: ManagedPosition,
  loop: LoopCheckpoint | undefined,
  agent: string | undefined,
): ResumeRedo {
  const redo = (modelCalls: number, interruptedToolCalls: string[] = []): ResumeRedo => ({
    modelCalls,
    rerunToolCalls: [],
    interruptedToolCalls,
  });
  switch (position.stage) {
    case 'manage':
      // The decision was not saved: the manager's call may have been in flight.
      return redo(1);
    case 'audit':
      // The audit runs again from its start; its first call is counted (those of the cut-off audit are not known).
      return redo(1);
    case 'verify':
      // The verdict was not saved: the verifier's call may have been in flight.
      return redo(1);
    case 'execute':
      if (agent === undefined) return resumeRedo(loop ? [loop] : []);
      // An external episode is never started twice: one in flight is handed to the audit as interrupted.
      return position.episodeStarted ? redo(0, [agent]) : redo(0);
    default:
      return redo(0);
  }
}
