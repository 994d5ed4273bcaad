/**
 * The judge's request in the AgentIF-OneDay contract: question, parsed attachments, answer text, the answer's files
 * parsed (and their images), the reference answer and the criteria as `Criterion i (ID: i, Score: ±n)`.
 * @module
 */
import type { ContentPart, Message } from '../../backend/types.js';
import { DataMark } from '../../prompts/datamark.js';
import type { AgentIfTask } from './dataset.js';
import type { AnswerMaterial, ParsedFile } from './judge-material.js';

/** Everything the judge sees about one deliverable. */
export interface JudgeMaterial {
  task: AgentIfTask;
  attachments: ParsedFile[];
  answerText: string;
  answer: AnswerMaterial;
  referenceFiles: ParsedFile[];
}

/** The JSON reply the judge must give. */
export const JUDGE_REPLY_SHAPE = '{"criteria_results":[{"criterion_id":"1","satisfied":true,"reasoning":"…"}]}';

const SYSTEM = [
  'You are the judge of AgentIF-OneDay, a benchmark of everyday agent tasks. You grade one answer against a rubric.',
  "For each criterion decide whether the answer matches the criterion's description. A criterion with a positive score is",
  'a bonus point: "satisfied": true means the answer earns it. A criterion with a negative score is a penalty:',
  '"satisfied": true means the penalty applies. Judge the delivered files by their content, not by what the answer text',
  'claims about them. A criterion that needs a delivered file is not satisfied when no file was delivered.',
  'Use the reference answer as a guide to what a good answer contains, not as the only acceptable answer.',
  `Reply with JSON only, one entry per criterion, in this shape: ${JUDGE_REPLY_SHAPE}`,
].join(' ');

/** The criteria as the contract numbers them: `Criterion 1 (ID: 1, Score: +2): …`. */
export function formatCriteria(criteria: AgentIfTask['score_criteria']): string {
  return criteria
    .map((c, i) => `Criterion ${i + 1} (ID: ${i + 1}, Score: ${c.score >= 0 ? '+' : ''}${c.score}): ${c.content}`)
    .join('\n');
}

/** The judge's messages. Everything the agent produced is datamarked: it can describe, never instruct. */
export function buildJudgeMessages(material: JudgeMaterial, mark: DataMark = DataMark.random()): Message[] {
  const { task, answer } = material;
  const files = answer.files.length
    ? answer.files.map((f) => mark.block(f.preview)).join('\n\n')
    : '(no files delivered)';
  const reference = [
    task.reference_answer_description.trim() || '(no reference description)',
    ...material.referenceFiles.map((f) => `--- reference file ${f.name} ---\n${f.preview}`),
  ].join('\n\n');
  const text = [
    `## Question\n${task.description}`,
    `## Attachments\n${material.attachments.map((f) => mark.block(f.preview)).join('\n\n') || '(none)'}`,
    `## Answer text\n${mark.block(material.answerText || '(empty)')}`,
    `## Answer files\n${files}`,
    ...(answer.notes.length ? [`## Notes on the answer files\n${answer.notes.join('\n')}`] : []),
    ...(answer.images.length
      ? [`## Images of the answer files\nAttached below, in order: ${mark.names(answer.images.map((i) => i.label))}.`]
      : []),
    `## Reference answer\n${reference}`,
    `## Criteria\n${formatCriteria(task.score_criteria)}`,
    `Reply with JSON only: ${JUDGE_REPLY_SHAPE}`,
  ].join('\n\n');
  const content: string | ContentPart[] = answer.images.length
    ? [
        { type: 'text', text },
        ...answer.images.map((image): ContentPart => ({ type: 'image', data: image.data, mediaType: image.mediaType })),
      ]
    : text;
  return [
    { role: 'system', content: mark.withRule(SYSTEM) },
    { role: 'user', content },
  ];
}
