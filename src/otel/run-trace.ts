/**
 * The spans of one run, built from its events: the run span, a span per stage (per round in managed mode) and per
 * subtask, a `chat` span per model call and an `execute_tool` span per tool call.
 * @module
 * @internal
 */
import type { Attributes, Context } from '@opentelemetry/api';
import type { Purpose } from '../backend/types.js';
import type { EventOf, HarnessEvent, RunResumeEvent, RunStartEvent } from '../events.js';
import { ERROR_TYPES, GEN_AI, HH, SPAN_EVENTS } from './attributes.js';
import { CallSpans } from './call-spans.js';
import type { ContentRecorder } from './content.js';
import type { SpanError, SpanNode, SpanTree } from './span-tree.js';

/** What every run trace of one instrumentation shares. @internal */
export interface RunTraceSettings {
  tree: SpanTree;
  /** Present when content is captured. */
  content: ContentRecorder | undefined;
  agentName: string;
}

type Stage = 'plan' | 'execute' | 'synthesize' | 'verify' | 'repair' | 'manage' | 'audit';

/** The stage a model call of each purpose belongs to; other purposes (summaries, vision) stay where they happen. */
const STAGE_OF_PURPOSE: Partial<Record<Purpose, Stage>> = {
  plan: 'plan',
  execute: 'execute',
  synthesize: 'synthesize',
  verify: 'verify',
  repair: 'repair',
  manage: 'manage',
  audit: 'audit',
};

/** The span state of one run; fed every event of that run, in order. @internal */
export class RunTrace {
  private readonly tree: SpanTree;
  private readonly content: ContentRecorder | undefined;
  private readonly run: SpanNode;
  private readonly mode: 'pipeline' | 'managed';
  private round: SpanNode | undefined;
  private roundNumber = 0;
  /** The stage open now; `endsAt` once its last event came, while what follows is not known yet. */
  private stage: { name: Stage; node: SpanNode; endsAt?: number } | undefined;
  private subtask: SpanNode | undefined;
  private readonly calls: CallSpans;
  /** When the last stage finished: a stage that opens with nothing open before it started then. */
  private boundary: number;
  private plannedSubtasks: number | undefined;
  private finishedSubtasks = 0;
  private providerKnown = false;
  private failure: SpanError | undefined;
  /** Harness clock of the last event seen, where {@link RunTrace.abandon} ends the spans. */
  private lastSeen: number;

  constructor(settings: RunTraceSettings, start: RunStartEvent | RunResumeEvent, parent: Context) {
    this.tree = settings.tree;
    this.content = settings.content;
    this.calls = new CallSpans(this.tree, this.content);
    this.mode = start.mode;
    this.boundary = start.timestamp;
    this.lastSeen = start.timestamp;
    const attributes: Attributes = {
      [GEN_AI.operationName]: 'invoke_agent',
      [GEN_AI.agentName]: settings.agentName,
      [GEN_AI.conversationId]: start.runId,
      [HH.runId]: start.runId,
      [HH.mode]: start.mode,
    };
    if (start.type === 'run-start') {
      attributes[HH.decomposition] = start.decomposition;
      attributes[HH.verification] = start.verification;
      if (this.content) attributes[GEN_AI.inputMessages] = this.content.textMessages('user', start.goal);
    } else {
      attributes[HH.resumed] = true;
      attributes[HH.stage] = start.stage;
    }
    this.run = this.tree.open(
      { name: `invoke_agent ${settings.agentName}`, kind: 'scope', start: start.timestamp, attributes },
      parent,
    );
  }

  /** Turns one event of this run into span changes; true once the run finished and every span of it ended. */
  handle(event: HarnessEvent): boolean {
    this.lastSeen = Math.max(this.lastSeen, event.timestamp);
    switch (event.type) {
      case 'run-resume':
        this.run.span.addEvent(SPAN_EVENTS.resume, { [HH.stage]: event.stage }, event.timestamp);
        break;
      case 'plan-created':
        this.planCreated(event);
        break;
      case 'subtask-start':
        this.subtaskStart(event);
        break;
      case 'subtask-attempt':
        this.subtaskAttempt(event);
        break;
      case 'subtask-finish':
        this.subtaskFinish(event);
        break;
      case 'llm-request':
        this.llmRequest(event);
        break;
      case 'llm-retry':
        this.calls.retry(event);
        break;
      case 'llm-response':
        this.calls.response(event);
        break;
      case 'tool-call':
        this.calls.toolCall(event, this.innermost());
        break;
      case 'tool-result':
        this.calls.toolResult(event);
        break;
      case 'memory-truncate':
      case 'memory-compress':
      case 'memory-prune':
        this.memoryEvent(event);
        break;
      case 'synthesis-finish':
        this.stageResult(
          'synthesize',
          event.timestamp,
          { [HH.status]: event.status, [HH.files]: event.deliverable.files.length },
          event.status === 'failed'
            ? { type: ERROR_TYPES.synthesis, message: 'Synthesis failed; the earlier candidate stays.' }
            : undefined,
        );
        break;
      case 'verify-finish':
        this.stageResult(
          'verify',
          event.timestamp,
          {
            [HH.attempt]: event.attempt,
            [HH.passed]: event.passed,
            [HH.status]: event.verdict.status,
            [HH.defects]: event.defects.length,
          },
          // A failed verdict is the stage's work done (a repair follows); no verdict at all is the stage failing.
          event.verdict.status === 'unverified'
            ? {
                type: 'verification-unavailable',
                message: event.verdict.reason ?? 'The verifier gave no usable verdict.',
              }
            : undefined,
        );
        // Managed mode's final verification ends the round of the `done` it followed.
        if (this.mode === 'managed') this.endRound(event.timestamp);
        break;
      case 'repair-start':
        this.enterStage('repair', event.timestamp).span.setAttributes({
          [HH.attempt]: event.attempt,
          [HH.defects]: event.defects.length,
        });
        break;
      case 'repair-finish':
        this.stageResult(
          'repair',
          event.timestamp,
          { [HH.attempt]: event.attempt, [HH.status]: event.status },
          event.status === 'completed'
            ? undefined
            : { type: event.status, message: `Repair ${event.attempt} ended ${event.status}.` },
        );
        break;
      case 'manager-decision':
        this.managerDecision(event);
        break;
      case 'integrity-violation':
        (this.round ?? this.run).span.addEvent(
          SPAN_EVENTS.integrityViolation,
          { [HH.changedPaths]: event.changedPaths.length, [HH.records]: event.records.length },
          event.timestamp,
        );
        break;
      case 'audit-finish':
        this.stageResult('audit', event.timestamp, {
          [HH.auditStatus]: event.status,
          [HH.integrity]: event.integrity,
          [HH.findings]: event.findings.length,
          [HH.changedPaths]: event.changedPaths.length,
          ...(event.fallback ? { [HH.fallback]: event.fallback } : {}),
        });
        this.endRound(event.timestamp);
        break;
      case 'run-warning':
        this.innermost().span.addEvent(
          SPAN_EVENTS.warning,
          {
            'horizon_harness.warning.code': event.code,
            'horizon_harness.warning.message': event.message,
            ...(event.purpose ? { [HH.purpose]: event.purpose } : {}),
            ...(event.scope ? { [HH.scope]: event.scope } : {}),
          },
          event.timestamp,
        );
        break;
      case 'run-error':
        this.failure = { type: event.error.code, message: event.error.message };
        if (this.stage) this.tree.fail(this.stage.node, this.failure, event.timestamp);
        break;
      case 'run-finish':
        this.runFinish(event);
        return true;
      default:
        // Deltas and events that change no span.
        break;
    }
    return false;
  }

  /** Ends every open span of the run at its last event (the instrumentation was stopped mid-run). */
  abandon(): void {
    this.tree.end(this.run, this.lastSeen);
  }

  // ---- stages, rounds, subtasks ----

  private planCreated(event: EventOf<'plan-created'>): void {
    this.plannedSubtasks = event.plan.length;
    const attributes = {
      [HH.planSubtasks]: event.plan.length,
      ...(event.fallback ? { [HH.planFallback]: event.fallback } : {}),
    };
    // Without decomposition nothing was planned: the run span says so, no plan span stands for work that never ran.
    if (event.fallback === 'decomposition-off') this.run.span.setAttributes(attributes);
    else this.stageResult('plan', event.timestamp, attributes);
  }

  private subtaskStart(event: EventOf<'subtask-start'>): void {
    const stage = this.enterStage('execute', event.timestamp);
    if (this.subtask) this.tree.end(this.subtask, event.timestamp);
    const attributes: Attributes = { [HH.subtaskId]: event.subtask.id, [HH.subtaskIndex]: event.index };
    if (this.content) attributes[HH.subtaskTitle] = event.subtask.title;
    this.subtask = this.tree.open({ name: event.subtask.id, kind: 'scope', start: event.timestamp, attributes }, stage);
  }

  private subtaskAttempt(event: EventOf<'subtask-attempt'>): void {
    if (!this.subtask) return;
    this.subtask.span.addEvent(SPAN_EVENTS.attempt, { [HH.attempt]: event.attempt }, event.timestamp);
    // A model or tool call of the failed attempt that never reported its end failed with it.
    const error = { type: ERROR_TYPES.other, message: event.previousError ?? 'The attempt failed.' };
    for (const child of [...this.subtask.children]) {
      if (child.kind !== 'call') continue;
      this.tree.fail(child, error, event.timestamp);
      this.tree.end(child, event.timestamp);
    }
  }

  private subtaskFinish(event: EventOf<'subtask-finish'>): void {
    const { record } = event;
    if (this.subtask) {
      this.subtask.span.setAttributes({ [HH.status]: record.status, [HH.subtaskAttempts]: record.attempts });
      const error =
        record.status === 'failed'
          ? { type: ERROR_TYPES.subtask, message: record.error ?? 'The subtask failed.' }
          : undefined;
      if (error) this.tree.fail(this.subtask, error, event.timestamp);
      this.tree.end(this.subtask, event.timestamp, error);
      this.subtask = undefined;
    }
    this.finishedSubtasks += 1;
    // The last subtask ends the execute stage, but it stays open to take the failure a run-error may still report.
    if (this.stage && this.plannedSubtasks !== undefined && this.finishedSubtasks >= this.plannedSubtasks) {
      this.stage.endsAt = event.timestamp;
    }
  }

  private managerDecision(event: EventOf<'manager-decision'>): void {
    // A round left open for a final verification that did not come (the `done` was refused, or verification is off).
    if (this.round && this.roundNumber !== event.round) this.endRound(event.timestamp);
    this.roundNumber = event.round;
    this.enterStage('manage', event.timestamp);
    this.round?.span.setAttribute(HH.round, event.round);
    this.stageResult('manage', event.timestamp, {
      [HH.round]: event.round,
      [HH.next]: event.next,
      [HH.records]: event.records.length,
      ...(event.fallback ? { [HH.fallback]: event.fallback } : {}),
    });
    if (event.next === 'execute') this.enterStage('execute', event.timestamp);
    // After a `done` the final verification may follow in the same round.
    else if (event.next === 'done') this.finishStage(event.timestamp);
    else this.endRound(event.timestamp);
  }

  /** The open span of `name`, or a new one (ending the stage open before it). */
  private enterStage(name: Stage, at: number): SpanNode {
    if (this.stage?.name === name) return this.stage.node;
    // Stages follow one another: one that opens after a finished stage began when that one ended.
    const start = this.stage ? (this.stage.endsAt ?? at) : this.boundary;
    this.closeStage(at);
    const parent = this.mode === 'managed' ? this.enterRound(start) : this.run;
    const attributes: Attributes = { [HH.stage]: name };
    if (this.mode === 'managed') attributes[HH.round] = this.roundNumber;
    const node = this.tree.open({ name, kind: 'scope', start, attributes }, parent);
    this.stage = { name, node };
    return node;
  }

  /** Sets a finished stage's outcome on its span (opening it when no event of it came before) and ends it. */
  private stageResult(name: Stage, at: number, attributes: Attributes, error?: SpanError): void {
    const node = this.enterStage(name, at);
    node.span.setAttributes(attributes);
    if (error) this.tree.fail(node, error, at);
    this.finishStage(at);
  }

  private finishStage(at: number): void {
    this.closeStage(at);
    this.boundary = at;
  }

  private closeStage(at: number, orphanError?: SpanError): void {
    if (!this.stage) return;
    this.tree.end(this.stage.node, this.stage.endsAt ?? at, orphanError);
    this.stage = undefined;
    this.subtask = undefined;
  }

  private enterRound(start: number): SpanNode {
    if (this.round) return this.round;
    this.roundNumber += 1;
    this.round = this.tree.open(
      { name: 'round', kind: 'scope', start, attributes: { [HH.round]: this.roundNumber } },
      this.run,
    );
    return this.round;
  }

  private endRound(at: number): void {
    this.finishStage(at);
    if (this.round) this.tree.end(this.round, at);
    this.round = undefined;
  }

  /** The span that model and tool calls happen under now. */
  private innermost(): SpanNode {
    return this.subtask ?? this.stage?.node ?? this.round ?? this.run;
  }

  // ---- model calls ----

  private llmRequest(event: EventOf<'llm-request'>): void {
    const stage = STAGE_OF_PURPOSE[event.purpose];
    if (stage) this.enterStage(stage, event.timestamp);
    if (!this.providerKnown) {
      this.run.span.setAttribute(GEN_AI.providerName, event.provider);
      this.providerKnown = true;
    }
    this.calls.request(event, this.innermost());
  }

  private memoryEvent(event: EventOf<'memory-truncate' | 'memory-compress' | 'memory-prune'>): void {
    const attributes: Attributes = {
      'horizon_harness.memory.tokens_before': event.tokensBefore,
      'horizon_harness.memory.tokens_after': event.tokensAfter,
      [HH.purpose]: event.purpose,
    };
    let name: string = SPAN_EVENTS.compress;
    if (event.type === 'memory-truncate') {
      name = SPAN_EVENTS.truncate;
      attributes[GEN_AI.toolName] = event.toolName;
      attributes[GEN_AI.toolCallId] = event.callId;
      attributes['horizon_harness.memory.strategy'] = event.strategy;
    } else if (event.type === 'memory-prune') {
      name = SPAN_EVENTS.prune;
      attributes['horizon_harness.memory.reason'] = event.reason;
    }
    this.innermost().span.addEvent(name, attributes, event.timestamp);
  }

  // ---- the end ----

  private runFinish(event: EventOf<'run-finish'>): void {
    const { result } = event;
    this.run.span.setAttributes({
      [HH.status]: result.status,
      [GEN_AI.usageInputTokens]: this.calls.usage.input,
      [GEN_AI.usageOutputTokens]: this.calls.usage.output,
      [HH.files]: result.deliverable.files.length,
    });
    if (this.content) {
      this.run.span.setAttribute(
        GEN_AI.outputMessages,
        this.content.textMessages('assistant', result.deliverable.answer, 'stop'),
      );
    }
    const error =
      result.status === 'succeeded'
        ? undefined
        : (this.failure ?? {
            type: result.error?.code ?? result.status,
            message: result.error?.message ?? `The run ended ${result.status}.`,
          });
    if (error) {
      // The stage the run stopped in failed with it (a run-error may have said so already).
      if (this.stage) this.tree.fail(this.stage.node, error, event.timestamp);
      this.tree.fail(this.run, error, event.timestamp);
    }
    this.closeStage(event.timestamp, error);
    if (this.round) this.tree.end(this.round, event.timestamp, error);
    this.tree.end(this.run, event.timestamp, error);
  }
}
