import { describe, expect, it } from 'vitest';
import { ContextOverflowError, HarnessError } from '../../src/errors.js';
import { createHarness } from '../../src/harness/harness.js';
import { estimateRequestTokens, type RequestFitter } from '../../src/llm/call-model.js';
import { submit, verdict } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { Verifier } from '../../src/verifier/verifier.js';
import { imagesOf, makePng, origin, tempDir, tempWorkspace, textOf } from './support.js';

/** A fitter like the memory's for a whole protected request: it passes what fits `limit` tokens and refuses the rest. */
function fitterUpTo(limit: number, seen: number[]): RequestFitter {
  return async (messages) => {
    const tokens = estimateRequestTokens(messages, []);
    seen.push(tokens);
    if (tokens > limit)
      throw new ContextOverflowError(`needs ${tokens} tokens, limit ${limit}`, {
        requestTokens: tokens,
        budgetTokens: limit,
      });
    return messages;
  };
}

describe('Verifier: degrading to fit the window', () => {
  it('verifies a 40 000-character answer on an 8 000-token window through createHarness', async () => {
    const answer = `HEAD-OF-ANSWER ${'lorem ipsum dolor sit amet '.repeat(1_500)}`.slice(0, 40_000);
    const backend = new ScriptedBackend(
      { execute: [submit(answer)], verify: [verdict(true)] },
      { contextWindow: 8_000 },
    );
    const result = await createHarness({ backend, workspace: await tempDir(), decomposition: false }).run(
      'Write a long essay.',
    );
    expect(result.error).toBeUndefined();
    expect(result.status).toBe('succeeded');
    expect(backend.callsFor('verify')).toHaveLength(1);
    expect(result.verdicts).toMatchObject([{ status: 'passed' }]);
    const verify = backend.callsFor('verify')[0];
    expect(textOf(verify)).toContain('HEAD-OF-ANSWER');
    expect(estimateRequestTokens(verify!.messages, [])).toBeLessThan(8_000 - (verify!.maxOutputTokens ?? 0));
  });

  it('shrinks previews, answers, subtask answers and images in steps until the fitter accepts the request', async () => {
    const workspace = await tempWorkspace();
    const files: string[] = [];
    for (let i = 0; i < 4; i++) {
      await workspace.writeFile(`part-${i}.md`, `PART-${i} ${'words and more words '.repeat(600)}`, origin);
      await workspace.writeFile(`figure-${i}.png`, makePng(40, 30), origin);
      files.push(`part-${i}.md`, `figure-${i}.png`);
    }
    const subtaskAnswers = [0, 1, 2].map((i) => ({
      title: `Step ${i}`,
      status: 'completed',
      answer: `STEP-${i} ${'detail '.repeat(2_000)}`,
      files: [],
    }));
    const seen: number[] = [];
    const backend = new ScriptedBackend({ verify: [verdict(true)] });
    const result = await new Verifier({ backend, fit: fitterUpTo(9_000, seen) }).verify({
      request: 'Write four parts with figures',
      deliverable: { answer: `FINAL ${'answer text '.repeat(2_000)}`, files },
      subtaskAnswers,
      workspace,
    });
    expect(backend.calls).toHaveLength(1);
    // Every refused attempt was larger than the one after it, and the one sent fits.
    expect(seen.length).toBeGreaterThan(1);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeLessThan(seen[i - 1]!);
    expect(seen.at(-1)).toBeLessThanOrEqual(9_000);
    const text = textOf(backend.calls[0]);
    expect(text).toContain('were shortened or left out so that it fits');
    for (const marker of ['PART-0', 'STEP-0', 'FINAL']) expect(text).toContain(marker);
    // Images are halved with the rest; those left out are counted and named.
    const sent = imagesOf(backend.calls[0]).length;
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThan(4);
    expect(result).toMatchObject({ status: 'passed', imagesSeen: sent, imagesSkipped: 4 - sent });
    expect(text).toContain("left out to fit the model's context window");
  });

  it('sizes the request from the backend window before any call', async () => {
    const workspace = await tempWorkspace();
    const files = ['a.md', 'b.md', 'c.md'];
    for (const file of files) await workspace.writeFile(file, 'x '.repeat(30_000), origin);
    const backend = new ScriptedBackend({ verify: [verdict(true)] }, { contextWindow: 4_000 });
    await new Verifier({ backend }).verify({ request: 'r', deliverable: { answer: 'a', files }, workspace });
    expect(backend.calls).toHaveLength(1);
    // The window less a quarter reserved for the answer.
    expect(estimateRequestTokens(backend.calls[0]!.messages, [])).toBeLessThanOrEqual(3_000);
  });

  it('retries smaller when the provider says the request is too long', async () => {
    const workspace = await tempWorkspace();
    await workspace.writeFile('big.md', 'PREVIEW '.repeat(5_000), origin);
    const tooLong = new HarnessError('context-length-exceeded', 'HTTP 400: maximum context length is 4096 tokens');
    const backend = new ScriptedBackend({ verify: [tooLong, verdict(true)] });
    await new Verifier({ backend }).verify({
      request: 'r',
      deliverable: { answer: 'a', files: ['big.md'] },
      workspace,
    });
    expect(backend.calls).toHaveLength(2);
    expect(textOf(backend.calls[1]).length).toBeLessThan(textOf(backend.calls[0]).length);
  });

  it('fails with a ContextOverflowError naming the sizes only when the minimum cannot fit, without calling the model', async () => {
    const workspace = await tempWorkspace();
    const backend = new ScriptedBackend({ verify: [verdict(true)] }, { contextWindow: 8_000 });
    const request = 'Do all of this: ' + 'a very long instruction '.repeat(2_000);
    const error = await new Verifier({ backend })
      .verify({ request, deliverable: { answer: 'a', files: [] }, workspace })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContextOverflowError);
    const overflow = error as ContextOverflowError;
    expect(overflow.code).toBe('context-overflow');
    expect(overflow.budgetTokens).toBe(6_000);
    expect(overflow.requestTokens).toBeGreaterThan(6_000);
    expect(overflow.message).toMatch(/8000-token context window of scripted\/scripted/);
    expect(overflow.message).toMatch(/system prompt \d+, original request \d+, file names and instructions \d+/);
    expect(backend.calls).toHaveLength(0);
  });

  it('fails the same way when the fitter refuses even the minimum', async () => {
    const workspace = await tempWorkspace();
    const seen: number[] = [];
    const backend = new ScriptedBackend({ verify: [verdict(true)] });
    await expect(
      new Verifier({ backend, fit: fitterUpTo(50, seen) }).verify({
        request: 'r',
        deliverable: { answer: 'a', files: [] },
        workspace,
      }),
    ).rejects.toMatchObject({
      code: 'context-overflow',
      message: expect.stringContaining('-token version was refused: needs'),
    });
    expect(seen).toHaveLength(1);
    expect(backend.calls).toHaveLength(0);
  });
});
