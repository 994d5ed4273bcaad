/**
 * The manager (purpose `manage`): decides each round from the request, the audited state and the audit reports.
 * @module
 */
import { z } from 'zod';
import type { LlmBackend, Message } from '../../backend/types.js';
import { HarnessError } from '../../errors.js';
import type { EmitEvent } from '../../events.js';
import { askJson } from '../../json/ask-json.js';
import type { CallSettings, RequestFitter, RequestTokenCounter } from '../../llm/call-model.js';
import type { RecordDraft, TaskState } from '../../contracts/task-state.js';
import { DataMark } from '../../prompts/datamark.js';
import { MANAGED_DEFAULTS } from '../shared/managed-options.js';
import { MANAGER_PROMPT, renderManagerRequest } from './prompts.js';
import { applyDrafts, openRecords } from './state.js';
import type { ManagerDecision, ManagerInput, ManagerLike, ManagerOutcome } from '../../contracts/managed.js';
import { withInstructions } from '../../prompts/instructions.js';

const text = z.string().trim().min(1);

const ReplySchema = z.object({
  records: z.array(z.object({ id: text.max(64), description: text })).default([]),
  next: z.enum(['execute', 'done', 'blocked', 'ask']),
  contract: z
    .object({
      task: text,
      acceptanceCriteria: z.array(text).min(1, 'give at least one criterion the auditor can check'),
      boundaries: z.array(text).default([]),
      recordIds: z.array(text).optional(),
    })
    .optional(),
  question: text.optional(),
  reason: z.string().trim().optional(),
  answer: z.string().trim().optional(),
});
type Reply = z.output<typeof ReplySchema>;

/** Options of {@link Manager}. */
export interface ManagerOptions {
  backend: LlmBackend;
  /** System prompt. @defaultValue MANAGER_PROMPT */
  prompt?: string;
  /** The application's instructions, appended to the prompt under a heading of their own. */
  instructions?: string;
  emit?: EmitEvent;
  countTokens?: RequestTokenCounter;
  /** Fits each request into the window (managed runs pass their memory); requests go out unchanged without it. */
  fit?: RequestFitter;
  now?: () => number;
  /** Sampling, output reserve and usage observer of the calls. */
  call?: CallSettings;
  /** Audit reports shown in full; older ones are summarised in a line each. @defaultValue 6 */
  reportsShown?: number;
  /** Evidence items shown per record. @defaultValue 3 */
  evidenceShown?: number;
}

/**
 * Decides the next step of a managed run in the JSON protocol `{ records, next, contract?, question?, reason?,
 * answer? }` (`answer`: the final answer, with `done`). It
 * sees the request, the audited state and the audit reports, never an executor's trace or claim, and has no tools.
 * A reply that is malformed, or inconsistent with the state (an `execute` without a contract, a contract naming an
 * unknown record), is re-asked once with the error; after that {@link fallbackDecision} decides.
 *
 * @example
 * ```ts
 * const manager = new Manager({ backend });
 * const { decision } = await manager.decide({
 *   runId: 'r1', round: 1, request: 'Write report.md about rivers', attachments: [],
 *   state: { records: [], round: 0 }, audits: [], answers: [], feedback: [],
 * });
 * decision.next; // 'execute'
 * ```
 */
export class Manager implements ManagerLike {
  private readonly options: ManagerOptions;

  constructor(options: ManagerOptions) {
    if (typeof options?.backend?.generate !== 'function') {
      throw new HarnessError('invalid-options', 'Manager needs `backend`: an LlmBackend with a generate() method.');
    }
    this.options = options;
  }

  /** Decides one round. Backend errors (and aborts) propagate; malformed replies fall back instead. */
  async decide(input: ManagerInput): Promise<ManagerOutcome> {
    const o = this.options;
    const mark = input.dataMark ?? DataMark.random();
    const messages: Message[] = [
      { role: 'system', content: mark.withRule(withInstructions(o.prompt ?? MANAGER_PROMPT, o.instructions)) },
      {
        role: 'user',
        content: renderManagerRequest({
          request: input.request,
          attachments: input.attachments,
          state: input.state,
          round: input.round,
          audits: input.audits,
          feedback: input.feedback,
          verification: input.verification,
          auditorRunsCommands: input.auditorRunsCommands,
          finalVerification: input.finalVerification,
          reportsShown: o.reportsShown ?? MANAGED_DEFAULTS.managerReportsShown,
          evidenceShown: o.evidenceShown ?? MANAGED_DEFAULTS.evidenceShown,
          mark,
        }),
      },
      // Earlier questions and their answers, as the dialogue they were: the manager asked, the user answered.
      ...input.answers.flatMap((qa): Message[] => [
        { role: 'assistant', content: JSON.stringify({ records: [], next: 'ask', question: qa.question }) },
        { role: 'user', content: `The user's answer to your question:\n${mark.block(qa.answer)}` },
      ]),
    ];
    const reply = await askJson(
      {
        backend: o.backend,
        purpose: 'manage',
        runId: input.runId,
        scope: `manage-${input.round}`,
        emit: o.emit,
        countTokens: o.countTokens,
        fit: o.fit,
        now: o.now,
        signal: input.signal,
        ...o.call,
      },
      messages,
      replySchema(input.state, input.round),
      // Only the manager's own decision counts, never one quoted in the reports or answers it was shown.
      { given: messages.flatMap((m) => (m.role === 'user' && typeof m.content === 'string' ? [m.content] : [])) },
    );
    if (!reply.ok) {
      return {
        decision: fallbackDecision(input.state),
        fallback: 'malformed-reply',
        reason: `The manager's reply stayed malformed after one re-ask (${reply.error}); the fallback decided instead.`,
      };
    }
    return { decision: resolve(reply.value, input.state, input.round) };
  }
}

/**
 * The decision when the manager's reply stays malformed: with every record completed, `done` (the completion gate
 * still checks it); with open records, `execute` a contract for all of them; with no records yet, one record holding
 * the whole request and a contract to carry it out.
 */
export function fallbackDecision(state: TaskState): ManagerDecision {
  const open = openRecords(state);
  if (state.records.length > 0 && open.length === 0) return { records: [], next: 'done' };
  if (open.length > 0) {
    return {
      records: [],
      next: 'execute',
      contract: {
        task: 'Complete the open records of the task state.',
        acceptanceCriteria: open.map((r) => r.description),
        boundaries: [],
        recordIds: open.map((r) => r.id),
      },
    };
  }
  const whole: RecordDraft = { id: 'request', description: 'The original request is carried out completely.' };
  return {
    records: [whole],
    next: 'execute',
    contract: {
      task: 'Carry out the original request completely.',
      acceptanceCriteria: ['Every requirement of the original request is met in the workspace.'],
      boundaries: [],
      recordIds: [whole.id],
    },
  };
}

/** The reply schema for this state: the protocol plus what the state makes inconsistent, so a re-ask can fix it. */
function replySchema(state: TaskState, round: number): z.ZodType<Reply> {
  return ReplySchema.superRefine((reply, ctx) => {
    const ids = reply.records.map((r) => r.id);
    const duplicate = ids.find((id, i) => ids.indexOf(id) !== i);
    if (duplicate) ctx.addIssue({ code: 'custom', path: ['records'], message: `the id "${duplicate}" appears twice` });
    if (reply.next === 'execute' && !reply.contract) {
      ctx.addIssue({ code: 'custom', path: ['contract'], message: 'next "execute" needs a contract' });
    }
    if (reply.next === 'ask' && !reply.question) {
      ctx.addIssue({ code: 'custom', path: ['question'], message: 'next "ask" needs a question' });
    }
    if (reply.next !== 'execute' || !reply.contract) return;
    const after = applyDrafts(state, reply.records, round);
    const unknown = (reply.contract.recordIds ?? []).filter((id) => !after.records.some((r) => r.id === id));
    if (unknown.length) {
      ctx.addIssue({
        code: 'custom',
        path: ['contract', 'recordIds'],
        message: `unknown record id(s) ${unknown.join(', ')}; known: ${after.records.map((r) => r.id).join(', ') || 'none (add records first)'}`,
      });
    } else if (recordIdsOf(reply.contract.recordIds, after).length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['contract', 'recordIds'],
        message: 'the contract works on no record: every record is completed; add a record for the new work',
      });
    }
  });
}

function resolve(reply: Reply, state: TaskState, round: number): ManagerDecision {
  const decision: ManagerDecision = { records: reply.records, next: reply.next };
  if (reply.next === 'execute' && reply.contract) {
    const { task, acceptanceCriteria, boundaries } = reply.contract;
    decision.contract = {
      task,
      acceptanceCriteria,
      boundaries,
      recordIds: recordIdsOf(reply.contract.recordIds, applyDrafts(state, reply.records, round)),
    };
  }
  if (reply.question) decision.question = reply.question;
  if (reply.reason) decision.reason = reply.reason;
  if (reply.next === 'done' && reply.answer) decision.answer = reply.answer;
  return decision;
}

/** The records a contract works on: those it names, else every open record. */
function recordIdsOf(named: readonly string[] | undefined, state: TaskState): string[] {
  const ids = named?.length ? named : openRecords(state).map((r) => r.id);
  return [...new Set(ids)];
}
