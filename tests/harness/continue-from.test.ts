/**
 * `run({ task, continueFrom })`: a follow-up request on the same work starts from the earlier run's deliverable,
 * verdict and files, in its workspace, never from its tool traces.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHarness } from '../../src/index.js';
import { ScriptedBackend, submit, toolCall, verdict } from '../../src/testing/index.js';
import { hang, tempDir, textOf, writeFile } from './helpers.js';

const FIRST_TASK = 'Write report.md about owls.';
const FIRST_ANSWER = 'report.md describes three owl species.';

function firstBackend() {
  return new ScriptedBackend({
    execute: [toolCall('write_file', { path: 'report.md', content: '# Owls' }), submit(FIRST_ANSWER, ['report.md'])],
    verify: [verdict(false, ['The barn owl section lacks a source.'])],
    repair: [submit(FIRST_ANSWER, ['report.md'])],
  });
}

const options = { tools: [writeFile, hang], decomposition: false, limits: { repairAttempts: 0 } };

describe('run({ continueFrom })', () => {
  it('starts from the previous answer, verdict and files in the same workspace, not from its traces', async () => {
    const workspace = await tempDir();
    const first = await createHarness({ ...options, backend: firstBackend(), workspace }).run(FIRST_TASK);
    expect(first.status).toBe('failed');

    const backend = new ScriptedBackend({
      execute: [submit('Added a chart.', ['report.md'])],
      verify: [verdict(true)],
    });
    const harness = createHarness({ ...options, backend, workspace });
    const next = await harness.run({ task: 'Now add a chart to the report.', continueFrom: first });

    expect(next.status).toBe('succeeded');
    expect(next.workspace).toBe(first.workspace);
    expect(await readFile(path.join(workspace, 'report.md'), 'utf8')).toBe('# Owls');
    const opening = textOf(backend.calls[0]);
    expect(opening).toContain('Now add a chart to the report.');
    expect(opening).toContain(FIRST_ANSWER);
    expect(opening).toContain('The barn owl section lacks a source.');
    expect(opening).toMatch(/Earlier files: ⟦data-[0-9a-f]+⟧report\.md/);
    expect(opening).not.toContain('TOOL-TRACE');
    expect(opening).not.toContain('write_file');
  });

  it('continues a run named by its id, loading its result and request from its snapshot', async () => {
    const workspace = await tempDir();
    await createHarness({ ...options, backend: firstBackend(), workspace }).run({ task: FIRST_TASK, runId: 'owls' });
    const backend = new ScriptedBackend({ execute: [submit('Added a chart.')], verify: [verdict(true)] });
    const next = await createHarness({ ...options, backend, workspace }).run({
      task: 'Now add a chart.',
      continueFrom: 'owls',
    });
    expect(next.status).toBe('succeeded');
    const opening = textOf(backend.calls[0]);
    expect(opening).toContain(FIRST_TASK);
    expect(opening).toContain(FIRST_ANSWER);
    expect(opening).not.toContain('TOOL-TRACE');
  });

  it('reuses the workspace of a run in a temporary one', async () => {
    const harness = createHarness({ ...options, verification: false, backend: firstBackend() });
    const first = await harness.run(FIRST_TASK);
    const backend = new ScriptedBackend({ execute: [submit('Added a chart.')] });
    const next = await createHarness({ ...options, verification: false, backend }).run({
      task: 'Now add a chart.',
      continueFrom: first,
    });
    expect(next.workspace).toBe(first.workspace);
    await harness.close();
  });

  it('refuses a run that has not finished, one it cannot find and one of another workspace', async () => {
    const workspace = await tempDir();
    const controller = new AbortController();
    const stopper = createHarness({
      ...options,
      backend: new ScriptedBackend({ execute: [toolCall('hang')] }),
      workspace,
    });
    stopper.on('tool-call', () => controller.abort());
    const aborted = await stopper.run({ task: FIRST_TASK, runId: 'cut', signal: controller.signal });
    expect(aborted.status).toBe('aborted');
    const harness = createHarness({ ...options, backend: new ScriptedBackend([]), workspace });
    await expect(harness.run({ task: 'More.', continueFrom: aborted })).rejects.toMatchObject({
      code: 'invalid-input',
      message: expect.stringMatching(/has not finished.*resume it/),
    });
    await expect(harness.run({ task: 'More.', continueFrom: 'cut' })).rejects.toMatchObject({
      code: 'invalid-input',
      message: expect.stringMatching(/has not finished/),
    });
    await expect(harness.run({ task: 'More.', continueFrom: 'never-ran' })).rejects.toMatchObject({
      code: 'run-not-found',
    });
    const elsewhere = createHarness({ ...options, backend: new ScriptedBackend([]), workspace: await tempDir() });
    await expect(
      elsewhere.run({ task: 'More.', continueFrom: { ...aborted, status: 'succeeded' } }),
    ).rejects.toMatchObject({
      code: 'invalid-input',
      message: expect.stringMatching(/worked in .* not in this harness's workspace/),
    });
  });
});
