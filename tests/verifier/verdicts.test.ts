import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHarness } from '../../src/harness/harness.js';
import { reply, submit, verdict } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { Verifier } from '../../src/verifier/verifier.js';
import { origin, tempDir, tempWorkspace, textOf } from './support.js';

describe('Verifier: a failure without defects', () => {
  it('re-asks once for the defects and uses them', async () => {
    const workspace = await tempWorkspace();
    const backend = new ScriptedBackend({ verify: [verdict(false), verdict(false, ['The table lacks units'])] });
    const result = await new Verifier({ backend }).verify({
      request: 'r',
      deliverable: { answer: 'x', files: [] },
      workspace,
    });
    expect(result).toMatchObject({
      status: 'failed',
      passed: false,
      defects: [{ description: 'The table lacks units' }],
    });
    expect(backend.calls).toHaveLength(2);
    expect(textOf(backend.calls[1])).toContain('did not pass but listed no defects');
  });

  it('is unverified when the re-ask names no defect either, also in a fresh request, with the reason', async () => {
    const workspace = await tempWorkspace();
    const backend = new ScriptedBackend({ verify: [verdict(false), verdict(true), verdict(false), verdict(false)] });
    const result = await new Verifier({ backend }).verify({
      request: 'r',
      deliverable: { answer: 'x', files: [] },
      workspace,
    });
    expect(result).toMatchObject({ status: 'unverified', passed: false, defects: [] });
    expect(result.reason).toContain('without naming a defect');
    expect(result.reason).toContain('A fresh verify request');
    expect(backend.calls).toHaveLength(4);
    // The fresh request is the first one again, without the replies that could not be used.
    expect(backend.calls[2]?.messages).toEqual(backend.calls[0]?.messages);
  });

  it('uses the defects a fresh request names when the first dialogue named none', async () => {
    const workspace = await tempWorkspace();
    const backend = new ScriptedBackend({
      verify: [verdict(false), verdict(false), verdict(false, ['The title is missing'])],
    });
    const result = await new Verifier({ backend }).verify({
      request: 'r',
      deliverable: { answer: 'x', files: [] },
      workspace,
    });
    expect(result).toMatchObject({ status: 'failed', defects: [{ description: 'The title is missing' }] });
    expect(backend.calls).toHaveLength(3);
  });

  it('does not re-ask when missing files explain the failure', async () => {
    const workspace = await tempWorkspace();
    const backend = new ScriptedBackend({ verify: [verdict(false)] });
    const result = await new Verifier({ backend }).verify({
      request: 'r',
      deliverable: { answer: 'x', files: ['ghost.md'] },
      workspace,
    });
    expect(result).toMatchObject({ status: 'failed', defects: [{ artifact: 'ghost.md' }] });
    expect(backend.calls).toHaveLength(1);
  });

  it('is not repaired by the harness, and the run ends unverified', async () => {
    const backend = new ScriptedBackend({
      execute: [submit('done')],
      verify: [verdict(false), verdict(false), verdict(false), verdict(false)],
    });
    const result = await createHarness({ backend, workspace: await tempDir(), decomposition: false }).run(
      'Write a haiku.',
    );
    expect(result.verdicts).toMatchObject([{ status: 'unverified', passed: false, defects: [] }]);
    expect(backend.callsFor('repair')).toHaveLength(0);
    expect(result.status).toBe('unverified');
  });

  it('keeps malformed replies unverified after one re-ask, also in a fresh request', async () => {
    const workspace = await tempWorkspace();
    const backend = new ScriptedBackend({
      verify: [reply('fine'), reply('{"passed":"yes"}'), reply('fine'), reply('{"passed":"yes"}')],
    });
    const result = await new Verifier({ backend }).verify({
      request: 'r',
      deliverable: { answer: 'x', files: [] },
      workspace,
    });
    expect(result).toMatchObject({ status: 'unverified', imagesSeen: 0, imagesSkipped: 0 });
    expect(result.reason).toContain('malformed');
  });
});

describe('Verifier: the deliverable answer', () => {
  it('saves a long answer as deliverable-<attempt> and shows its head and tail naming the file', async () => {
    const workspace = await tempWorkspace();
    const answer = `ANSWER-HEAD ${'body '.repeat(8_000)}ANSWER-TAIL`;
    const backend = new ScriptedBackend({ verify: [verdict(true)] });
    await new Verifier({ backend }).verify({ request: 'r', deliverable: { answer, files: [] }, workspace, attempt: 2 });
    expect(await readFile(path.join(workspace.root, '.harness/answers/deliverable-2.md'), 'utf8')).toBe(answer);
    const text = textOf(backend.calls[0]);
    expect(text).toContain('ANSWER-HEAD');
    expect(text).toContain('ANSWER-TAIL');
    expect(text).toContain('full answer in .harness/answers/deliverable-2.md');
    expect(text.length).toBeLessThan(answer.length / 2);
  });

  it('shows a subtask answer equal to the deliverable answer once', async () => {
    const workspace = await tempWorkspace();
    await workspace.writeFile('a.md', 'A', origin);
    const backend = new ScriptedBackend({ verify: [verdict(true)] });
    await new Verifier({ backend }).verify({
      request: 'r',
      deliverable: { answer: 'THE-ONLY-ANSWER', files: [] },
      subtaskAnswers: [{ title: 'Do it', status: 'completed', answer: 'THE-ONLY-ANSWER', files: [] }],
      workspace,
    });
    const text = textOf(backend.calls[0]);
    expect(text.match(/THE-ONLY-ANSWER/g)).toHaveLength(1);
    expect(text).toContain("(the same text as the deliverable's answer)");
  });
});
