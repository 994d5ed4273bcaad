/**
 * Folds a run's events into a {@link RunView}. Pure: events in, a plain object out.
 * @module
 */
import type { HarnessEvent } from '../events.js';
import type { CallView, LaneKind, LaneView, MemoryMark, RoundView, RunView, ToolView } from './run-view.js';

/** Images kept for the page at most: each is inlined as a data URL. */
const MAX_IMAGES = 12;

/** The events of `runId` (default: the run of the last event) folded into a {@link RunView}. */
export function buildRunView(events: readonly HarnessEvent[], runId?: string): RunView {
  const runIds = [...new Set(events.map((event) => event.runId))];
  const chosen = runId ?? events.at(-1)?.runId ?? '';
  const own = events.filter((event) => event.runId === chosen);
  const view: RunView = {
    runId: chosen,
    otherRunIds: runIds.filter((id) => id !== chosen),
    firstTimestamp: own[0]?.timestamp ?? 0,
    lastTimestamp: own.at(-1)?.timestamp ?? 0,
    resumes: [],
    warnings: [],
    calls: [],
    marks: [],
    lanes: [],
    subtasks: new Map(),
    verdicts: [],
    repairs: [],
    rounds: [],
    images: [],
  };
  const folder = new Folder(view);
  for (const event of own) folder.add(event);
  addStartUp(view, own);
  view.lanes.sort((a, b) => a.start - b.start);
  return view;
}

/**
 * A lane from `run-start` to the first stage's first event: what the run did before it (intake, workspace and tool
 * set-up) would otherwise be an unexplained gap at the start of the timeline.
 */
function addStartUp(view: RunView, events: readonly HarnessEvent[]): void {
  const start = events.find((event) => event.type === 'run-start');
  const firstLane = Math.min(...view.lanes.map((lane) => lane.start));
  if (!start || !Number.isFinite(firstLane) || firstLane <= start.timestamp) return;
  view.lanes.push({
    key: 'start-up',
    kind: 'start-up',
    label: 'start-up (before the first stage)',
    start: start.timestamp,
    end: firstLane,
    retries: [],
    tools: [],
  });
}

/** Tool call ids are the model's: unique only within one loop (some servers restart them at each response). */
function toolKey(scope: string | undefined, callId: string): string {
  return `${scope ?? ''}\u0000${callId}`;
}

/** The lane a scope belongs to: retries and re-asks join their loop's lane, a managed claim its execution. */
export function laneKeyOf(scope: string): string {
  return scope
    .replace(/-attempt-\d+$/, '')
    .replace(/-reask$/, '')
    .replace(/^claim-(\d+)$/, 'execute-$1');
}

function laneKindOf(key: string): LaneKind {
  const head = /^([a-z]+)/.exec(key)?.[1] ?? '';
  const kinds: Record<string, LaneKind> = {
    plan: 'plan',
    subtask: 'subtask',
    synthesis: 'synthesis',
    verify: 'verify',
    repair: 'repair',
    manage: 'manage',
    execute: 'execute',
    audit: 'audit',
  };
  return kinds[head] ?? 'other';
}

class Folder {
  private readonly lanes = new Map<string, LaneView>();
  private readonly calls = new Map<string, CallView>();
  private readonly tools = new Map<string, ToolView>();

  constructor(private readonly view: RunView) {}

  add(event: HarnessEvent): void {
    const scope = 'scope' in event && typeof event.scope === 'string' ? event.scope : undefined;
    if (scope !== undefined) this.touch(laneKeyOf(scope), event.timestamp);
    switch (event.type) {
      case 'run-start':
        this.view.start = event;
        this.view.warnings.push(...event.warnings);
        break;
      case 'run-resume':
        this.view.resumes.push(event);
        // The run goes on: how it ended before (aborted, a crash's error) is no longer how it ends.
        this.view.result = undefined;
        this.view.error = undefined;
        break;
      case 'plan-created':
        this.touch('plan', event.timestamp);
        break;
      case 'subtask-start':
        this.touch(event.subtask.id, event.timestamp).label = `${event.subtask.id}: ${event.subtask.title}`;
        break;
      case 'subtask-attempt':
        if (event.attempt > 1) this.touch(event.subtaskId, event.timestamp).retries.push(event.timestamp);
        break;
      case 'subtask-finish': {
        const lane = this.touch(event.record.id, event.timestamp);
        lane.status = event.record.status;
        lane.label = `${event.record.id}: ${event.record.title}`;
        this.view.subtasks.set(event.record.id, event.record);
        break;
      }
      case 'synthesis-finish':
        this.touch('synthesis', event.timestamp).status = event.status;
        this.view.synthesis = event;
        break;
      case 'verify-finish':
        this.touch(`verify-${event.attempt}`, event.timestamp).status = event.status;
        this.view.verdicts.push(event);
        break;
      case 'repair-start':
        this.touch(`repair-${event.attempt}`, event.timestamp);
        this.repair(event.attempt).start = event;
        break;
      case 'repair-finish':
        this.touch(`repair-${event.attempt}`, event.timestamp).status = event.status;
        this.repair(event.attempt).finish = event;
        break;
      case 'llm-request':
        this.request(event, scope);
        break;
      case 'llm-retry': {
        const call = this.calls.get(event.callId);
        if (call) call.retries += 1;
        break;
      }
      case 'llm-response': {
        const call = this.calls.get(event.callId);
        if (!call) break;
        call.answered = true;
        call.inputTokens = event.usage.inputTokens;
        call.outputTokens = event.usage.outputTokens;
        call.cachedInputTokens = event.usage.cachedInputTokens;
        call.durationMs = event.durationMs;
        call.cost = event.cost;
        call.currency = event.currency;
        break;
      }
      case 'tool-call': {
        const tool: ToolView = {
          callId: event.callId,
          toolName: event.toolName,
          arguments: event.arguments,
          files: [],
        };
        this.tools.set(toolKey(scope, event.callId), tool);
        if (scope !== undefined) this.touch(laneKeyOf(scope), event.timestamp).tools.push(tool);
        break;
      }
      case 'tool-result': {
        const tool = this.tools.get(toolKey(scope, event.callId));
        if (!tool) break;
        tool.durationMs = event.durationMs;
        tool.isError = event.isError;
        tool.outputChars = event.outputChars;
        tool.output = event.output;
        tool.files = event.files;
        break;
      }
      case 'memory-truncate': {
        const tool = this.tools.get(toolKey(scope, event.callId));
        if (tool && event.savedTo) tool.savedTo = event.savedTo;
        break;
      }
      case 'memory-compress':
        this.mark('compress', event, `${event.roundsSummarized} rounds summarised`);
        break;
      case 'memory-prune':
        this.mark(
          event.reason === 'context-length-error' ? 'overflow' : 'prune',
          event,
          `${event.messagesRemoved} messages removed (${event.reason})`,
        );
        break;
      case 'cache-break':
        // Compressions and prunes have memory events of their own; an aging shows only as the cache break it causes.
        if (event.cause === 'aging') {
          this.mark(
            'aging',
            event,
            `old tool results collapsed to digests from message ${event.firstChangedMessage}; ${event.prefixTokensLost} cached prefix tokens to send again`,
          );
        }
        break;
      case 'manager-decision':
        this.touch(`manage-${event.round}`, event.timestamp).status = event.next;
        this.round(event.round).decision = event;
        break;
      case 'audit-finish':
        this.touch(`audit-${event.round}`, event.timestamp).status = `${event.status}, ${event.integrity}`;
        this.round(event.round).audit = event;
        break;
      case 'integrity-violation':
        this.round(event.round).violations.push(event);
        break;
      case 'run-warning':
        this.view.warnings.push(`${event.code}: ${event.message}`);
        break;
      case 'run-finish':
        this.view.result = event.result;
        break;
      case 'run-error':
        this.view.error = event;
        break;
    }
  }

  private request(event: Extract<HarnessEvent, { type: 'llm-request' }>, scope: string | undefined): void {
    const call: CallView = {
      index: this.view.calls.length,
      callId: event.callId,
      purpose: event.purpose,
      scope,
      timestamp: event.timestamp,
      requestTokens: event.requestTokens,
      ...(event.contextWindow === undefined ? {} : { contextWindow: event.contextWindow }),
      retries: 0,
      answered: false,
    };
    this.calls.set(event.callId, call);
    this.view.calls.push(call);
    if (event.purpose !== 'verify' || !event.content) return;
    for (const message of event.content.messages) {
      if (message.role !== 'user' || typeof message.content === 'string') continue;
      for (const part of message.content) {
        // Only inline data: the page makes no request, so an image given by URL is not fetched.
        if (part.type !== 'image' || /^https?:/i.test(part.data) || this.view.images.length >= MAX_IMAGES) continue;
        this.view.images.push({ attempt: scope ?? 'verify', mediaType: part.mediaType, data: part.data });
      }
    }
  }

  private mark(
    kind: MemoryMark['kind'],
    event: { scope?: string; tokensBefore?: number; tokensAfter?: number },
    detail: string,
  ): void {
    this.view.marks.push({
      kind,
      beforeCall: this.view.calls.length,
      scope: event.scope,
      ...(event.tokensBefore === undefined ? {} : { tokensBefore: event.tokensBefore }),
      ...(event.tokensAfter === undefined ? {} : { tokensAfter: event.tokensAfter }),
      detail,
    });
  }

  private touch(key: string, timestamp: number): LaneView {
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { key, kind: laneKindOf(key), label: key, start: timestamp, end: timestamp, retries: [], tools: [] };
      this.lanes.set(key, lane);
      this.view.lanes.push(lane);
    }
    lane.start = Math.min(lane.start, timestamp);
    lane.end = Math.max(lane.end, timestamp);
    return lane;
  }

  private repair(attempt: number): RunView['repairs'][number] {
    while (this.view.repairs.length < attempt) this.view.repairs.push({});
    return this.view.repairs[attempt - 1]!;
  }

  private round(round: number): RoundView {
    let found = this.view.rounds.find((r) => r.round === round);
    if (!found) {
      found = { round, violations: [] };
      this.view.rounds.push(found);
    }
    return found;
  }
}
