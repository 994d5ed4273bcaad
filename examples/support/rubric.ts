/**
 * AgentIF-OneDay-style rubric scoring: a judge backend marks each criterion satisfied or not, and the score is
 * the satisfied positive points minus the triggered penalties, floored at 0, over the positive total.
 * @module
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { parseJsonReply, type LlmBackend, type RunResult } from 'horizon-harness';
import type { AgentIfTask } from './ablation-tasks.js';

const CriteriaResults = z.object({
  criteria_results: z.array(z.object({ criterion_id: z.union([z.string(), z.number()]), satisfied: z.boolean() })),
});

/**
 * The rubric score of one deliverable. `satisfied` holds the 1-based ids of the criteria the judge marked satisfied;
 * for a negative criterion "satisfied" means its penalty applies.
 */
export function rubricScore(criteria: AgentIfTask['score_criteria'], satisfied: ReadonlySet<string>): number {
  const gained = criteria.reduce((sum, c, i) => sum + (satisfied.has(String(i + 1)) ? c.score : 0), 0);
  const positive = criteria.reduce((sum, c) => sum + Math.max(0, c.score), 0);
  return positive === 0 ? 0 : Math.max(0, gained) / positive;
}

/** The judge's prompt: the question, the answer text, the delivered files (bounded) and the numbered criteria. */
export async function judgePrompt(task: AgentIfTask, result: RunResult): Promise<string> {
  const criteria = task.score_criteria.map(
    (c, i) => `Criterion ${i + 1} (ID: ${i + 1}, Score: ${c.score}): ${c.content}`,
  );
  return [
    `## Question\n${task.description}`,
    `## Answer text\n${result.deliverable.answer}`,
    `## Answer files\n${(await deliveredText(result)) || '(no files delivered)'}`,
    `## Criteria\n${criteria.join('\n')}`,
    'For each criterion decide whether the answer matches its description (for a negative score: whether the penalty applies). ' +
      'A criterion that needs a delivered file is not satisfied when no file was delivered. Reply with JSON only: ' +
      '{"criteria_results":[{"criterion_id":"1","satisfied":true,"reasoning":"…"}]}',
  ].join('\n\n');
}

/** Asks `judge` to mark each criterion and scores the deliverable; `error` says why the judge's reply was unusable. */
export async function scoreWithJudge(
  judge: LlmBackend,
  task: AgentIfTask,
  result: RunResult,
): Promise<{ score: number; error?: string }> {
  const answer = await judge.generate({
    messages: [{ role: 'user', content: await judgePrompt(task, result) }],
    purpose: 'verify',
  });
  const parsed = parseJsonReply(answer.message.content, CriteriaResults);
  if (!parsed.ok) return { score: 0, error: parsed.error };
  const satisfied = new Set(
    parsed.value.criteria_results.filter((r) => r.satisfied).map((r) => String(r.criterion_id)),
  );
  return { score: rubricScore(task.score_criteria, satisfied) };
}

/** Reads the deliverable's files (each bounded) for the judge. */
async function deliveredText(result: RunResult): Promise<string> {
  const parts: string[] = [];
  for (const file of result.deliverable.files) {
    try {
      const body = await readFile(path.join(result.workspace, file), 'utf8');
      parts.push(`--- ${file} ---\n${body.slice(0, 10_000)}`);
    } catch {
      parts.push(`--- ${file} --- (missing)`);
    }
  }
  return parts.join('\n');
}
