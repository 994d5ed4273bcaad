/**
 * A run's progress as a BullMQ job reports it: folded from the harness's events, sent at most once per interval.
 * @module
 */
import type { HarnessEvent } from '../events.js';

/** The job progress (`job.progress`) of a run job. */
export interface RunProgress {
  runId: string;
  /** `start`, `plan`, `execute`, `synthesize`, `verify`, `repair`, `manage`, `audit` or `finished`. */
  stage: string;
  /** How many subtasks the plan has (pipeline mode), once planned. */
  subtasks?: number;
  /** The subtask being executed (pipeline mode): its 1-based index and title. */
  subtask?: { index: number; title: string };
  /**
   * ReAct iterations of the run so far (model calls of the execute, synthesize and repair loops); after a resume,
   * counted on from the iterations the snapshot had booked.
   */
  iteration: number;
  /** Tool calls started in this job attempt. */
  toolCalls: number;
  /** True once the run went on from a snapshot (another worker started it). */
  resumed: boolean;
  /** The run's status, once finished. */
  status?: string;
}

const STAGE_OF_PURPOSE: Record<string, string> = {
  plan: 'plan',
  execute: 'execute',
  synthesize: 'synthesize',
  verify: 'verify',
  repair: 'repair',
  manage: 'manage',
  audit: 'audit',
};

/** The purposes whose model calls are ReAct iterations (of executor loops, each bounded by its own limit). */
const LOOP_PURPOSES = new Set(['execute', 'synthesize', 'repair']);

/** The progress after `event`; `undefined` when the event changes nothing worth reporting. @internal */
export function nextProgress(progress: RunProgress, event: HarnessEvent): RunProgress | undefined {
  switch (event.type) {
    case 'run-start':
      return { ...progress, stage: 'start' };
    case 'run-resume':
      return { ...progress, stage: event.stage, resumed: true };
    case 'plan-created':
      return { ...progress, stage: 'plan', subtasks: event.plan.length };
    case 'subtask-start':
      return { ...progress, stage: 'execute', subtask: { index: event.index + 1, title: event.subtask.title } };
    case 'llm-request': {
      const stage = STAGE_OF_PURPOSE[event.purpose] ?? progress.stage;
      const iteration = progress.iteration + (LOOP_PURPOSES.has(event.purpose) ? 1 : 0);
      return { ...progress, stage, iteration };
    }
    case 'tool-call':
      return { ...progress, toolCalls: progress.toolCalls + 1 };
    case 'run-finish':
      return { ...progress, stage: 'finished', status: event.result.status };
    default:
      return undefined;
  }
}

/**
 * Sends the latest progress at most once per `intervalMs`: the first change at once, later ones when the interval
 * has passed (the last one always arrives). Sending failures are handed to `onError`, never thrown into the run.
 * @internal
 */
export class ProgressThrottle {
  #latest: RunProgress | undefined;
  #sentAt = Number.NEGATIVE_INFINITY;
  #timer: NodeJS.Timeout | undefined;
  #sending: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(
    private readonly send: (progress: RunProgress) => Promise<void>,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records a new progress; sends it now or when the interval has passed. */
  update(progress: RunProgress): void {
    if (this.#stopped) return;
    this.#latest = progress;
    const wait = this.#sentAt + this.intervalMs - this.now();
    if (wait <= 0) this.#flush();
    else this.#timer ??= setTimeout(() => this.#flush(), wait);
  }

  /** Sends what is pending, stops sending, and waits for the last send to settle. */
  async stop(): Promise<void> {
    if (this.#timer) this.#flush();
    this.#stopped = true;
    await this.#sending;
  }

  #flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const progress = this.#latest;
    if (!progress) return;
    this.#latest = undefined;
    this.#sentAt = this.now();
    // Sends are chained so that progress never arrives out of order.
    this.#sending = this.#sending.then(() => this.send(progress)).catch(this.onError);
  }
}
