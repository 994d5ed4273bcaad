import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply, verdict } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { Verifier } from '../../src/verifier/verifier.js';
import { LocalWorkspace } from '../../src/workspace/local-workspace.js';

let dir: string;
let workspace: LocalWorkspace;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'verifier-test-'));
  workspace = await LocalWorkspace.create({ dir });
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const origin = { tool: 'host' };

describe('Verifier used on its own', () => {
  it('judges a host deliverable by the content of its files', async () => {
    await workspace.writeFile('report.md', '# Report\nREPORT-BODY with numbers', origin);
    const backend = new ScriptedBackend({
      verify: [verdict(false, [{ description: 'No summary table', artifact: 'report.md' }])],
    });
    const result = await new Verifier({ backend }).verify({
      request: 'Write report.md with a summary table',
      deliverable: { answer: 'See report.md', files: ['report.md'] },
      workspace,
    });
    expect(result).toEqual({
      attempt: 1,
      status: 'failed',
      passed: false,
      defects: [{ description: 'No summary table', artifact: 'report.md' }],
      imagesSeen: 0,
      imagesSkipped: 0,
    });
    const prompt = JSON.stringify(backend.calls[0]!.messages);
    expect(prompt).toContain('REPORT-BODY with numbers');
    expect(prompt).toContain('Write report.md with a summary table');
    expect(backend.calls[0]!.purpose).toBe('verify');
  });

  it('bounds each preview and shares one overall budget', async () => {
    await workspace.writeFile('a.txt', 'A'.repeat(5_000), origin);
    await workspace.writeFile('b.txt', 'B'.repeat(5_000), origin);
    await workspace.writeFile('c.txt', 'C'.repeat(5_000), origin);
    const backend = new ScriptedBackend({ verify: [verdict(true)] });
    await new Verifier({ backend, previewChars: 1_000, previewBudgetChars: 1_500 }).verify({
      request: 'r',
      deliverable: { answer: '', files: ['a.txt', 'b.txt', 'c.txt'] },
      workspace,
    });
    const prompt = String(backend.calls[0]!.messages[1]!.content);
    expect(prompt.match(/A+/)?.[0].length ?? 0).toBeLessThanOrEqual(1_000);
    expect(prompt.match(/B+/)?.[0].length ?? 0).toBeLessThanOrEqual(500);
    expect(prompt).not.toMatch(/CCCC/);
    expect(prompt).toContain('overall preview budget');
  });

  it('reports a missing file as a defect even when the model passes it or cannot answer', async () => {
    const passing = new ScriptedBackend({ verify: [verdict(true)] });
    const first = await new Verifier({ backend: passing }).verify({
      request: 'r',
      deliverable: { answer: 'done', files: ['ghost.pdf', '../outside.txt'] },
      workspace,
    });
    expect(first.status).toBe('failed');
    expect(first.defects.map((d) => d.artifact)).toEqual(['ghost.pdf', '../outside.txt']);

    const broken = new ScriptedBackend({ verify: [reply('?'), reply('??')] });
    const second = await new Verifier({ backend: broken }).verify({
      request: 'r',
      deliverable: { answer: 'done', files: ['ghost.pdf'] },
      workspace,
      attempt: 2,
    });
    expect(second).toMatchObject({ attempt: 2, status: 'failed', passed: false });
  });

  it('does not let a model pass a deliverable while it lists defects', async () => {
    const backend = new ScriptedBackend({ verify: [verdict(true, ['typo in title'])] });
    const result = await new Verifier({ backend }).verify({
      request: 'r',
      deliverable: { answer: 'x', files: [] },
      workspace,
    });
    expect(result).toMatchObject({ status: 'failed', passed: false });
  });

  it('rejects bad options', () => {
    expect(() => new Verifier({ backend: new ScriptedBackend([]), previewChars: 0 })).toThrow(/previewChars/);
  });
});
