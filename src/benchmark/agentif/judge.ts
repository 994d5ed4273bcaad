/**
 * Judging one deliverable per criterion: the judge's JSON validated, re-asked once when malformed or incomplete, and
 * criteria it still leaves out marked unjudged. The contract's file rule is enforced on top of the judge.
 * @module
 */
import { z } from 'zod';
import type { LlmBackend, Message } from '../../backend/types.js';
import { parseJsonReply } from '../../json/parse-json-reply.js';
import { buildJudgeMessages, JUDGE_REPLY_SHAPE, type JudgeMaterial } from './judge-prompt.js';

/** The judge's reply, as the AgentIF-OneDay contract defines it. */
export const JudgeReplySchema = z.object({
  criteria_results: z.array(
    z.object({
      criterion_id: z.union([z.string(), z.number()]).transform(String),
      satisfied: z.boolean(),
      reasoning: z.string().default(''),
    }),
  ),
});

/**
 * The judgement of one criterion. `satisfied` is null when the criterion is unjudged (the judge's reply left it out
 * even after a re-ask); for a penalty criterion `true` means the penalty applies.
 */
export interface CriterionJudgement {
  /** `"1"`, `"2"`, … in rubric order. */
  id: string;
  content: string;
  score: number;
  satisfied: boolean | null;
  reasoning: string;
  /**
   * `judge`: the judge's verdict; `no-file-delivered`: a bonus criterion that needs a file, set unsatisfied because no
   * file was delivered (whatever the judge said); `unjudged`: no usable verdict.
   */
  source: 'judge' | 'no-file-delivered' | 'unjudged';
}

/** All criteria of one deliverable, and how the judging went. */
export interface TaskJudgement {
  criteria: CriterionJudgement[];
  /** Judge calls made: 1, or 2 when the first reply was re-asked. */
  calls: number;
  /** Why some criteria are unjudged, when some are. */
  problem?: string;
}

/**
 * Words that show a criterion is about a delivered file: a file extension or a document type (English and Chinese,
 * the benchmark's languages). Used only when no file was delivered, to hold the judge to the contract's file rule.
 */
const FILE_CRITERION =
  /\.(md|txt|csv|tsv|xlsx?|docx?|pptx?|pdf|png|jpe?g|gif|svg|html?|json|ya?ml|py|js|ts|zip)\b|\b(files?|documents?|spreadsheets?|workbooks?|excel|pdfs?|pptx?|slides?|decks?|powerpoint|docx)\b|文件|文档|幻灯片|演示文稿|表格文件|PPT|Excel|PDF/i;

/** Whether a criterion's text asks for something in a delivered file (see docs/benchmark.md). */
export function needsDeliveredFile(content: string): boolean {
  return FILE_CRITERION.test(content);
}

/** Asks `judge` for a verdict on every criterion of `material`'s task. Backend errors propagate. */
export async function judgeDeliverable(
  judge: LlmBackend,
  material: JudgeMaterial,
  signal?: AbortSignal,
): Promise<TaskJudgement> {
  const criteria = material.task.score_criteria;
  const messages = buildJudgeMessages(material);
  const first = await ask(judge, messages, signal);
  let reply = check(first.content, criteria.length);
  let calls = 1;
  if (!reply.complete) {
    const again: Message[] = [
      ...messages,
      { role: 'assistant', content: first.content },
      {
        role: 'user',
        content: `Your reply could not be used: ${reply.problem} Reply again with JSON only, one entry for each of the ${criteria.length} criteria: ${JUDGE_REPLY_SHAPE}`,
      },
    ];
    reply = check((await ask(judge, again, signal)).content, criteria.length);
    calls = 2;
  }
  const noFiles = material.answer.files.length === 0;
  const judged = criteria.map((criterion, index): CriterionJudgement => {
    const id = String(index + 1);
    const verdict = reply.verdicts.get(id);
    const base = { id, content: criterion.content, score: criterion.score };
    if (criterion.score > 0 && noFiles && needsDeliveredFile(criterion.content) && verdict?.satisfied !== false) {
      return {
        ...base,
        satisfied: false,
        reasoning: 'No file was delivered, and this criterion needs one.',
        source: 'no-file-delivered',
      };
    }
    if (!verdict)
      return { ...base, satisfied: null, reasoning: reply.problem ?? 'left out by the judge', source: 'unjudged' };
    return { ...base, satisfied: verdict.satisfied, reasoning: verdict.reasoning, source: 'judge' };
  });
  const unjudged = judged.filter((c) => c.source === 'unjudged').length;
  return {
    criteria: judged,
    calls,
    ...(unjudged ? { problem: `${unjudged} criteria unjudged after a re-ask: ${reply.problem ?? 'left out'}` } : {}),
  };
}

async function ask(judge: LlmBackend, messages: Message[], signal: AbortSignal | undefined) {
  const result = await judge.generate({
    messages,
    responseFormat: { type: 'json', name: 'criteria_results' },
    temperature: 0,
    ...(signal ? { signal } : {}),
  });
  return result.message;
}

interface CheckedReply {
  verdicts: Map<string, { satisfied: boolean; reasoning: string }>;
  complete: boolean;
  problem?: string;
}

/** The verdicts of a reply by criterion id (ids 1..count only; the first verdict of an id counts). */
function check(content: string, count: number): CheckedReply {
  const parsed = parseJsonReply(content, JudgeReplySchema);
  if (!parsed.ok) return { verdicts: new Map(), complete: false, problem: parsed.error };
  const verdicts = new Map<string, { satisfied: boolean; reasoning: string }>();
  for (const result of parsed.value.criteria_results) {
    const id = result.criterion_id.trim();
    if (/^\d+$/.test(id) && Number(id) >= 1 && Number(id) <= count && !verdicts.has(String(Number(id)))) {
      verdicts.set(String(Number(id)), { satisfied: result.satisfied, reasoning: result.reasoning });
    }
  }
  const missing = Array.from({ length: count }, (_, i) => String(i + 1)).filter((id) => !verdicts.has(id));
  if (missing.length === 0) return { verdicts, complete: true };
  return { verdicts, complete: false, problem: `no verdict for criteria ${missing.join(', ')}.` };
}
