import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ContextOverflowError } from '../../src/errors.js';
import type { EventInput } from '../../src/events.js';
import { createHarness } from '../../src/harness/harness.js';
import { estimateRequestTokens, type RequestFitter } from '../../src/llm/call-model.js';
import { Planner } from '../../src/planner/planner.js';
import { DataMark } from '../../src/prompts/datamark.js';
import { planOf, reply, submit } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { LocalWorkspace } from '../../src/workspace/local-workspace.js';

const dirs: string[] = [];
const MARK = new DataMark('0123456789abcdef');
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'planner-test-'));
  dirs.push(dir);
  return dir;
}

function userText(backend: ScriptedBackend, index = 0): string {
  return String(backend.calls[index]?.messages[1]?.content);
}

describe('Planner', () => {
  it('returns ids in plan order, sets purpose plan and emits request/response events', async () => {
    const backend = new ScriptedBackend({
      plan: [planOf('Find', { title: 'Write', objective: 'write it', expectedOutput: 'out.md' })],
    });
    const events: EventInput[] = [];
    const outcome = await new Planner({ backend, emit: (e) => events.push(e) }).plan({
      request: 'Do the thing',
      attachments: ['attachments/a.csv'],
      runId: 'r1',
    });
    expect(outcome.subtasks).toEqual([
      { id: 'subtask-1', title: 'Find', objective: 'Find', expectedOutput: 'The result of: Find' },
      { id: 'subtask-2', title: 'Write', objective: 'write it', expectedOutput: 'out.md' },
    ]);
    expect(outcome.fallback).toBeUndefined();
    const prompt = backend.calls[0]!;
    expect(prompt.purpose).toBe('plan');
    expect(JSON.stringify(prompt.messages)).toContain('attachments/a.csv');
    expect(prompt.messages[0]?.content).toContain('at most 6 subtasks');
    expect(events.map((e) => e.type)).toEqual(['llm-request', 'llm-response']);
    expect(events[0]).toMatchObject({ runId: 'r1', purpose: 'plan', scope: 'plan' });
  });

  it('falls back to a single subtask after one failed re-ask', async () => {
    const backend = new ScriptedBackend({ plan: [reply('?'), reply('{"subtasks":"many"}')] });
    const outcome = await new Planner({ backend }).plan({ request: 'Do the thing' });
    expect(outcome.fallback).toBe('single-subtask');
    expect(outcome.subtasks).toHaveLength(1);
    expect(outcome.reason).toContain('subtasks');
  });

  it('asks once more, stating the cap, for a plan over maxSubtasks; a plan that fits is not asked again', async () => {
    const backend = new ScriptedBackend({ plan: [planOf('a', 'b', 'c'), planOf('ab', 'c')] });
    const outcome = await new Planner({ backend }).plan({ request: 'Do the thing', maxSubtasks: 2 });
    expect(outcome.subtasks.map((s) => s.title)).toEqual(['ab', 'c']);
    expect(outcome.fallback).toBeUndefined();
    const reAsk = backend.calls[1]!.messages;
    // The same dialogue, the plan it gave and the cap: as a malformed reply is re-asked.
    expect(reAsk.slice(0, 2)).toEqual(backend.calls[0]!.messages);
    expect(reAsk[2]).toMatchObject({ role: 'assistant' });
    expect(JSON.parse(String(reAsk[2]?.content)).subtasks).toHaveLength(3);
    expect(String(reAsk[3]?.content)).toContain('Your plan has 3 subtasks; the limit is 2.');
    backend.assertComplete();
  });

  it('cuts the first plan when the reply asked again with the cap is unusable, and says so', async () => {
    const backend = new ScriptedBackend({ plan: [planOf('a', 'b', 'c'), reply('Sorry, I cannot merge them.')] });
    const outcome = await new Planner({ backend }).plan({ request: 'Do the thing', maxSubtasks: 2 });
    expect(outcome.subtasks.map((s) => s.title)).toEqual(['a', 'b']);
    expect(outcome.fallback).toBe('truncated');
    expect(outcome.reason).toBe(
      'The planner returned 3 subtasks, more than limits.maxSubtasks (2); asked again with the cap stated, it gave ' +
        'no usable plan (The reply contains no parseable JSON object), so its first plan stands; kept the first 2.',
    );
  });

  it('rejects an invalid maxSubtasks', async () => {
    const planner = new Planner({ backend: new ScriptedBackend([]) });
    await expect(planner.plan({ request: 'x', maxSubtasks: 0 })).rejects.toMatchObject({ code: 'invalid-input' });
  });

  it('rejects bad preview options', () => {
    expect(() => new Planner({ backend: new ScriptedBackend([]), previewBudgetChars: 0 })).toThrow(
      /previewBudgetChars/,
    );
  });
});

describe('Planner: attachment previews', () => {
  it('shows bounded previews of the attachments when given the workspace', async () => {
    const workspace = await LocalWorkspace.create({ dir: await tempDir() });
    await workspace.writeFile('attachments/brief.md', `BRIEF-START ${'requirement '.repeat(2_000)}`, {
      tool: 'intake',
    });
    await workspace.writeFile('attachments/data.csv', 'region,revenue\nnorth,100\n', { tool: 'intake' });
    const backend = new ScriptedBackend({ plan: [planOf('a')] });
    await new Planner({ backend, previewChars: 1_000 }).plan({
      request: 'Summarise the brief',
      attachments: ['attachments/brief.md', 'attachments/data.csv', 'attachments/gone.txt'],
      workspace,
      dataMark: MARK,
    });
    const text = userText(backend);
    expect(text).toContain('BRIEF-START');
    expect(text).toContain('| north | 100 |');
    expect(text).toContain(`### File ${MARK.inline('attachments/gone.txt')}\n(attachment not found in the workspace)`);
    expect(text.match(/requirement/g)!.length).toBeLessThan(100);
    expect(text).not.toContain('shortened');
  });

  it('lists only the names without a workspace', async () => {
    const backend = new ScriptedBackend({ plan: [planOf('a')] });
    await new Planner({ backend }).plan({ request: 'r', attachments: ['attachments/a.pdf'], dataMark: MARK });
    expect(userText(backend)).toContain(
      `Attached files, available in the workspace: ${MARK.inline('attachments/a.pdf')}`,
    );
    expect(userText(backend)).not.toContain('FILE PREVIEW');
  });

  it('shrinks the previews until the request fits, down to names only', async () => {
    const workspace = await LocalWorkspace.create({ dir: await tempDir() });
    for (const name of ['a', 'b', 'c']) {
      await workspace.writeFile(`attachments/${name}.md`, `${name.toUpperCase()}-CONTENT ${'text '.repeat(3_000)}`, {
        tool: 'intake',
      });
    }
    const seen: number[] = [];
    const fit: RequestFitter = async (messages) => {
      const tokens = estimateRequestTokens(messages, []);
      seen.push(tokens);
      if (tokens > 2_500)
        throw new ContextOverflowError(`needs ${tokens}`, { requestTokens: tokens, budgetTokens: 2_500 });
      return messages;
    };
    const backend = new ScriptedBackend({ plan: [planOf('a')] });
    const outcome = await new Planner({ backend, fit }).plan({
      request: 'r',
      attachments: ['attachments/a.md', 'attachments/b.md', 'attachments/c.md'],
      workspace,
    });
    expect(outcome.subtasks).toHaveLength(1);
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.at(-1)).toBeLessThanOrEqual(2_500);
    expect(userText(backend)).toContain("The previews were shortened to fit the model's context window.");

    const tiny = new ScriptedBackend({ plan: [planOf('a')] }, { contextWindow: 900 });
    await new Planner({ backend: tiny }).plan({
      request: 'r',
      attachments: ['attachments/a.md'],
      workspace,
      dataMark: MARK,
    });
    expect(userText(tiny)).toContain(`### File ${MARK.inline('attachments/a.md')}\n(preview left out`);
  });

  it('fails with a ContextOverflowError only when the request itself cannot fit', async () => {
    const backend = new ScriptedBackend({ plan: [planOf('a')] }, { contextWindow: 2_000 });
    await expect(new Planner({ backend }).plan({ request: 'word '.repeat(10_000) })).rejects.toMatchObject({
      code: 'context-overflow',
      message: expect.stringMatching(/The plan request cannot fit the 2000-token context window/),
    });
    expect(backend.calls).toHaveLength(0);
  });

  it('sees the attachments of a run through createHarness', async () => {
    const source = path.join(await tempDir(), 'brief.txt');
    await writeFile(source, 'ATTACHED-BRIEF: metric units only');
    const backend = new ScriptedBackend({ plan: [planOf('Do it')], execute: [submit('done')] });
    const result = await createHarness({ backend, workspace: await tempDir(), verification: false }).run({
      task: 'Follow the brief',
      attachments: [source],
    });
    expect(result.status).toBe('succeeded');
    expect(userText(backend)).toContain('ATTACHED-BRIEF: metric units only');
  });
});
