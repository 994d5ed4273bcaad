import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AgentIfTaskSchema,
  judgeDeliverable,
  loadAgentIfDataset,
  needsDeliveredFile,
  parseAnswerFiles,
  scoreTask,
  type JudgeMaterial,
} from 'horizon-harness/benchmark';
import { ScriptedBackend, reply } from 'horizon-harness/testing';
import { makePng } from '../workspace/support/make-files.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'agentif-unit-'));
  dirs.push(dir);
  return dir;
}

const task = AgentIfTaskSchema.parse({
  question_id: 'taskif_7',
  title: 'Notes',
  description: 'Write notes.md.',
  score_criteria: [
    { content: 'notes.md has a title', score: 2 },
    { content: 'The reply is polite', score: 1 },
    { content: 'The reply is rude', score: -2 },
  ],
});

function material(files: Array<{ name: string; preview: string }> = []): JudgeMaterial {
  return { task, attachments: [], answerText: 'ok', answer: { files, images: [], notes: [] }, referenceFiles: [] };
}

const verdicts = (...satisfied: boolean[]) =>
  reply(JSON.stringify({ criteria_results: satisfied.map((s, i) => ({ criterion_id: i + 1, satisfied: s })) }));

describe('scoreTask (the official formula)', () => {
  it('is max(0, Σ satisfied scores) / Σ positive scores; a penalty applies when satisfied; unjudged counts as not', () => {
    const c = (score: number, satisfied: boolean | null) => ({ score, satisfied });
    expect(scoreTask([c(2, true), c(1, false), c(-2, false)]).score).toBeCloseTo(2 / 3, 12);
    expect(scoreTask([c(2, true), c(1, true), c(-2, true)])).toEqual({ score: 1 / 3, gained: 1, possible: 3 });
    expect(scoreTask([c(1, false), c(1, true), c(-2, true)])).toEqual({ score: 0, gained: -1, possible: 2 });
    expect(scoreTask([c(2, null), c(-1, null)])).toEqual({ score: 0, gained: 0, possible: 2 });
    expect(scoreTask([c(-1, false)]).score).toBe(0);
  });
});

describe('judgeDeliverable', () => {
  it('re-asks once on a malformed reply, quoting the problem, and uses the second reply', async () => {
    const judge = new ScriptedBackend([reply('Looks good to me!'), verdicts(true, true, false)]);
    const judged = await judgeDeliverable(judge, material([{ name: 'notes.md', preview: '# Notes' }]));
    expect(judged.calls).toBe(2);
    expect(judged.criteria.map((c) => c.satisfied)).toEqual([true, true, false]);
    expect(judged.problem).toBeUndefined();
    expect(String(judge.calls[1]?.messages.at(-1)?.content)).toMatch(/could not be used: .*no parseable JSON/);
  });

  it('marks every criterion unjudged when both replies are malformed, and says why', async () => {
    const judge = new ScriptedBackend([reply('nope'), reply('{"criteria_results": "all fine"}')]);
    const judged = await judgeDeliverable(judge, material([{ name: 'notes.md', preview: '# Notes' }]));
    expect(judged.criteria.every((c) => c.satisfied === null && c.source === 'unjudged')).toBe(true);
    expect(judged.problem).toMatch(/3 criteria unjudged after a re-ask: The JSON does not match/);
    judge.assertComplete();
  });

  it('holds a bonus criterion that needs a file unsatisfied when no file was delivered, and leaves others to the judge', async () => {
    const judge = new ScriptedBackend([verdicts(true, true, false)]);
    const judged = await judgeDeliverable(judge, material());
    expect(judged.criteria.map((c) => [c.satisfied, c.source])).toEqual([
      [false, 'no-file-delivered'],
      [true, 'judge'],
      [false, 'judge'],
    ]);
    expect(needsDeliveredFile('Delivers a PPT with 5 slides')).toBe(true);
    expect(needsDeliveredFile('生成的Excel文件包含汇总表')).toBe(true);
    expect(needsDeliveredFile('The reply names three museums')).toBe(false);
  });

  it('shows the judge the images of the delivered files, unless its backend takes no images', async () => {
    const workspace = await tempDir();
    await writeFile(path.join(workspace, 'chart.png'), makePng(30, 20));
    const answer = await parseAnswerFiles(workspace, ['chart.png', '../outside.txt'], { maxChars: 1000, images: true });
    expect(answer.images).toHaveLength(1);
    expect(answer.files[1]?.preview).toMatch(/cannot be read/);
    const judge = new ScriptedBackend([verdicts(true, false, false)]);
    await judgeDeliverable(judge, { ...material(), answer });
    const content = judge.calls[0]?.messages[1]?.content;
    expect(Array.isArray(content) && content.some((part) => part.type === 'image')).toBe(true);

    const blind = await parseAnswerFiles(workspace, ['chart.png'], { maxChars: 1000, images: false });
    expect(blind.images).toEqual([]);
  });
});

describe('loadAgentIfDataset', () => {
  it('finds stored attachments by id and original name without mixing up taskif_1 and taskif_12', async () => {
    const dir = await tempDir();
    const questions = path.join(dir, 'Attachments', 'Questions');
    await mkdir(questions, { recursive: true });
    await writeFile(path.join(questions, 'taskif_12attachmentdata.csv'), 'a\n12\n');
    await writeFile(path.join(questions, 'taskif_1attachmentdata.csv'), 'a\n1\n');
    const record = (id: string) => JSON.stringify({ ...task, question_id: id, attachment_filenames: ['data.csv'] });
    await writeFile(path.join(dir, 'data.jsonl'), `${record('taskif_12')}\n\n${record('taskif_1')}\n`);
    const loaded = await loadAgentIfDataset({
      data: path.join(dir, 'data.jsonl'),
      attachments: path.join(dir, 'Attachments'),
      taskIds: ['taskif_1'],
    });
    expect(loaded).toHaveLength(1);
    expect(loaded[0]).toMatchObject({
      line: 3,
      attachments: [{ path: path.join(questions, 'taskif_1attachmentdata.csv'), name: 'data.csv' }],
    });
  });

  it('refuses an id that could leave the output directory', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'data.jsonl'), JSON.stringify({ ...task, question_id: '../x' }));
    await expect(loadAgentIfDataset({ data: path.join(dir, 'data.jsonl') })).rejects.toThrow(
      /line 1, field "question_id": must be letters, digits/,
    );
  });
});
