/**
 * What the page shows of a run, folded from its events (see `fold-events.ts`): its model calls, the lanes of its
 * timeline, the tool calls of each lane, memory actions, verdicts and repairs, managed rounds.
 * @module
 */
import type { Purpose } from '../backend/types.js';
import type { RunResult, SubtaskRecord } from '../contracts/work.js';
import type {
  AuditFinishEvent,
  IntegrityViolationEvent,
  ManagerDecisionEvent,
  RepairFinishEvent,
  RepairStartEvent,
  RunErrorEvent,
  RunResumeEvent,
  RunStartEvent,
  SynthesisFinishEvent,
  VerifyFinishEvent,
} from '../events.js';

/** One model call: its request size and, once answered, its usage. */
export interface CallView {
  /** 0-based position among the run's model calls. */
  index: number;
  callId: string;
  purpose: Purpose;
  scope?: string;
  timestamp: number;
  requestTokens: number;
  /** The window of the backend it went to (absent from logs written before `llm-request` carried it). */
  contextWindow?: number;
  inputTokens?: number;
  outputTokens?: number;
  cachedInputTokens?: number;
  durationMs?: number;
  cost?: number;
  currency?: string;
  retries: number;
  /** False while no `llm-response` came for it: it failed, or the run stopped while it was in flight. */
  answered: boolean;
}

/** One tool call with what its result event says. */
export interface ToolView {
  callId: string;
  toolName: string;
  arguments: string;
  durationMs?: number;
  isError?: boolean;
  outputChars?: number;
  /** What the model was shown of the output, bounded (absent from logs written before `tool-result` carried it). */
  output?: string;
  files: string[];
  /** Where the full output was saved when memory bounded it. */
  savedTo?: string;
}

/** A compression, prune, overflow or aging of observations, placed before the model call it made room for. */
export interface MemoryMark {
  kind: 'compress' | 'prune' | 'overflow' | 'aging';
  /** Model calls made before it (the mark sits between call `beforeCall - 1` and `beforeCall`). */
  beforeCall: number;
  scope?: string;
  /** The dialogue's size before and after (absent for an aging: its `cache-break` does not say them). */
  tokensBefore?: number;
  tokensAfter?: number;
  detail: string;
}

/** What a lane of the timeline is. */
export type LaneKind =
  | 'start-up'
  | 'plan'
  | 'subtask'
  | 'synthesis'
  | 'verify'
  | 'repair'
  | 'manage'
  | 'execute'
  | 'audit'
  | 'other';

/** One row of the timeline: a stage, subtask, repair or managed role's round, from its first event to its last. */
export interface LaneView {
  key: string;
  kind: LaneKind;
  label: string;
  start: number;
  end: number;
  /** How it ended (`completed`, `failed`, `passed`, …), when an event said so. */
  status?: string;
  /** Timestamps of the attempts after the first (subtask retries). */
  retries: number[];
  tools: ToolView[];
}

/** One managed round: the manager's decision, the audit and any integrity violation. */
export interface RoundView {
  round: number;
  decision?: ManagerDecisionEvent;
  audit?: AuditFinishEvent;
  violations: IntegrityViolationEvent[];
}

/** An image a verify request showed the model (only when the run captured content). */
export interface SeenImage {
  attempt: string;
  mediaType: string;
  data: string;
}

/** Everything the page shows of one run. */
export interface RunView {
  runId: string;
  /** Other runs the log holds (a workspace reused by several runs). */
  otherRunIds: string[];
  start?: RunStartEvent;
  firstTimestamp: number;
  lastTimestamp: number;
  result?: RunResult;
  error?: RunErrorEvent;
  resumes: RunResumeEvent[];
  warnings: string[];
  calls: CallView[];
  marks: MemoryMark[];
  lanes: LaneView[];
  subtasks: Map<string, SubtaskRecord>;
  synthesis?: SynthesisFinishEvent;
  verdicts: VerifyFinishEvent[];
  repairs: Array<{ start?: RepairStartEvent; finish?: RepairFinishEvent }>;
  rounds: RoundView[];
  images: SeenImage[];
}

/** The purposes of the run's model calls, in the order of their first call. */
export function purposesOf(view: RunView): Purpose[] {
  return [...new Set(view.calls.map((call) => call.purpose))];
}
