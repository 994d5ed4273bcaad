import { mkdir, readFile, writeFile as writeOnDisk } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GenerateResult } from '../../src/backend/types.js';
import { analyzeImageTool, createHarness, HarnessError, readFileTool } from '../../src/index.js';
import { planOf, reply, ScriptedBackend, submit, toolCall, toolCalls, verdict } from '../../src/testing/index.js';
import { makePng } from '../workspace/support/make-files.js';
import { tempDir, textOf, writeFile, collect } from './helpers.js';

const TASK = 'Write report.md about rivers, with a chart.';

describe('state integrity: no file a loop wrote is lost', () => {
  it('a loop that ends with plain text still hands on the files its tools wrote (the verifier sees them)', async () => {
    const backend = new ScriptedBackend({
      execute: [
        toolCall('write_file', { path: 'report.md', content: '# Rivers' }),
        reply('Done: the report is written.'),
      ],
      verify: [verdict(true)],
    });
    const result = await createHarness({
      backend,
      tools: [writeFile],
      workspace: await tempDir(),
      decomposition: false,
    }).run(TASK);
    expect(result.subtasks[0]?.files).toEqual(['report.md']);
    expect(result.deliverable.files).toEqual(['report.md']);
    expect(textOf(backend.callsFor('verify')[0])).toContain('# Rivers');
  });

  it('submit_answer.files adds to the files the loop wrote instead of replacing them', async () => {
    const backend = new ScriptedBackend({
      execute: [
        toolCalls([
          { name: 'write_file', args: { path: 'data.csv', content: 'a,b' } },
          { name: 'write_file', args: { path: 'report.md', content: '# R' } },
        ]),
        submit('report written', ['report.md', './report.md']),
      ],
    });
    const harness = createHarness({
      backend,
      tools: [writeFile],
      workspace: await tempDir(),
      decomposition: false,
      verification: false,
    });
    const result = await harness.run(TASK);
    expect(result.deliverable.files.sort()).toEqual(['data.csv', 'report.md']);
  });
});

describe('state integrity: a failed stage never overwrites the deliverable', () => {
  it('a failed synthesis keeps the assembled subtask answers and every subtask file as the candidate', async () => {
    const backend = new ScriptedBackend({
      plan: [planOf('Data', 'Chart')],
      execute: [
        toolCall('write_file', { path: 'data.csv', content: 'x,y' }),
        submit('ANSWER-DATA', ['data.csv']),
        toolCall('write_file', { path: 'chart.png', content: 'png' }),
        submit('ANSWER-CHART', ['chart.png']),
      ],
      synthesize: [
        toolCall('write_file', { path: 'draft.md', content: 'half' }),
        reply('Let me draft the report first.'),
      ].map((step, i) => (i === 1 ? new HarnessError('server-error', 'the provider fell over') : step)),
      verify: [verdict(true)],
    });
    const harness = createHarness({ backend, tools: [writeFile], workspace: await tempDir() });
    const events = collect(harness);
    const result = await harness.run(TASK);
    const synthesis = events.find((e) => e.type === 'synthesis-finish');
    expect(synthesis).toMatchObject({ status: 'failed' });
    expect(result.deliverable.answer).toContain('ANSWER-DATA');
    expect(result.deliverable.answer).toContain('ANSWER-CHART');
    expect(result.deliverable.answer).not.toContain('Let me draft');
    expect(result.deliverable.files).toEqual(['data.csv', 'chart.png']);
    // The verifier judged the candidate, not the failed loop's words.
    expect(textOf(backend.callsFor('verify')[0])).toContain('ANSWER-DATA');
  });

  it('a failed repair leaves the previous deliverable unchanged, and its defects stay open', async () => {
    const backend = new ScriptedBackend({
      execute: [submit('GOOD-ANSWER', [])],
      verify: [verdict(false, ['needs a chart']), verdict(false, ['needs a chart'])],
      repair: [
        toolCall('write_file', { path: 'scratch.md', content: 'draft' }),
        new HarnessError('server-error', 'gone'),
      ],
    });
    const harness = createHarness({
      backend,
      tools: [writeFile],
      workspace: await tempDir(),
      decomposition: false,
      limits: { repairAttempts: 1 },
    });
    const events = collect(harness);
    const result = await harness.run(TASK);
    expect(events.find((e) => e.type === 'repair-finish')).toMatchObject({
      status: 'failed',
      deliverable: { answer: 'GOOD-ANSWER' },
    });
    expect(result.deliverable).toEqual({ answer: 'GOOD-ANSWER', files: [] });
    expect(result).toMatchObject({ status: 'failed', error: { code: 'verification-failed' } });
  });

  it('a successful repair merges: the answer stays when it gives none, its files join the deliverable', async () => {
    const backend = new ScriptedBackend({
      execute: [toolCall('write_file', { path: 'report.md', content: '# R' }), submit('REPORT', ['report.md'])],
      verify: [verdict(false, ['needs a chart']), verdict(true)],
      repair: [toolCall('write_file', { path: 'chart.png', content: 'png' }), submit('', ['chart.png'])],
    });
    const result = await createHarness({
      backend,
      tools: [writeFile],
      workspace: await tempDir(),
      decomposition: false,
    }).run(TASK);
    expect(result.status).toBe('succeeded');
    expect(result.deliverable).toEqual({ answer: 'REPORT', files: ['report.md', 'chart.png'] });
  });
});

describe('state integrity: retries and budgets', () => {
  it('gives a retry a fresh scope and so a fresh file-preview budget', async () => {
    const workspace = await tempDir();
    const line = 'river data line with several words in it\n';
    await writeOnDisk(path.join(workspace, 'big.txt'), line.repeat(2_000));
    const read = () => toolCall('read_file', { path: 'big.txt' });
    const backend = new ScriptedBackend({
      plan: [planOf('Read big.txt')],
      execute: [read(), read(), read(), read(), new HarnessError('server-error', 'flaky'), read(), submit('done')],
    });
    const harness = createHarness({
      backend,
      tools: [readFileTool()],
      workspace,
      verification: false,
      memory: { fileParserTokens: 5_000 },
    });
    const events = collect(harness);
    const result = await harness.run(TASK);
    expect(result.status).toBe('succeeded');
    const reads = events.flatMap((e) => (e.type === 'tool-call' && e.toolName === 'read_file' ? [e.scope] : []));
    expect(reads).toEqual(['subtask-1', 'subtask-1', 'subtask-1', 'subtask-1', 'subtask-1-attempt-2']);
    const observed = (request: (typeof backend.calls)[number] | undefined): number => {
      const last = request?.messages.at(-1);
      return last?.role === 'tool' && typeof last.content === 'string' ? last.content.length : 0;
    };
    const calls = backend.callsFor('execute');
    // The first attempt's fourth read got what was left of its budget; the retry's first read a full preview again.
    expect(observed(calls[4])).toBeLessThan(2_000);
    expect(observed(calls.at(-1))).toBeGreaterThan(9_000);
  });

  it('bounds a runaway subtask by its own loop: later subtasks, synthesis and a repair still run', async () => {
    let verifies = 0;
    const backend = new ScriptedBackend((request): GenerateResult => {
      if (request.purpose === 'plan') return planOf('Runaway', 'Second');
      if (request.purpose === 'verify') return (verifies += 1) > 1 ? verdict(true) : verdict(false, ['fix it']);
      if (request.purpose === 'execute' && textOf(request).includes('Subtask 1 of 2')) {
        return toolCall('write_file', { path: 'loop.md', content: 'again' });
      }
      return submit(`${request.purpose} done`);
    });
    const harness = createHarness({
      backend,
      tools: [writeFile],
      workspace: await tempDir(),
      limits: { maxIterations: 40, subtaskAttempts: 1 },
    });
    const result = await harness.run(TASK);
    expect(result.subtasks.map((s) => s.status)).toEqual(['failed', 'completed']);
    expect(backend.callsFor('synthesize')).toHaveLength(1);
    expect(backend.callsFor('repair')).toHaveLength(1);
    expect(result.status).toBe('succeeded');
  });
});

describe('state integrity: non-retryable backend errors end the run at once', () => {
  it.each(['authentication', 'bad-request', 'not-found'] as const)(
    '%s in a subtask: no more attempts, no synthesis',
    async (code) => {
      const backend = new ScriptedBackend({
        plan: [planOf('a', 'b')],
        execute: [new HarnessError(code, `the provider said ${code}`)],
      });
      const harness = createHarness({ backend, workspace: await tempDir() });
      const events = collect(harness);
      const result = await harness.run(TASK);
      expect(result).toMatchObject({ status: 'failed', error: { code, message: `the provider said ${code}` } });
      expect(backend.callsFor('execute')).toHaveLength(1);
      expect(backend.callsFor('synthesize')).toHaveLength(0);
      expect(events.find((e) => e.type === 'run-error')).toMatchObject({ stage: 'execute', error: { code } });
      expect(result.subtasks.map((s) => s.status)).toEqual(['failed', 'skipped']);
    },
  );

  it('with decomposition off, a 401 is tried once and run-error names the execute stage', async () => {
    const backend = new ScriptedBackend({ execute: [new HarnessError('authentication', 'Incorrect API key')] });
    const harness = createHarness({ backend, workspace: await tempDir(), decomposition: false });
    const events = collect(harness);
    const result = await harness.run(TASK);
    expect(backend.calls).toHaveLength(1);
    expect(events.find((e) => e.type === 'run-error')).toMatchObject({
      stage: 'execute',
      error: { code: 'authentication' },
    });
    expect(result.error?.message).toBe('Incorrect API key');
  });
});

describe('goal drift: prompts and sampling', () => {
  it('shows every subtask the whole plan with its own part marked', async () => {
    const backend = new ScriptedBackend({
      plan: [planOf('Gather data', 'Draw chart', 'Write report')],
      execute: [submit('a'), submit('b'), submit('c')],
      synthesize: [submit('abc')],
      verify: [verdict(true)],
    });
    await createHarness({ backend, workspace: await tempDir() }).run(TASK);
    const second = textOf(backend.callsFor('execute')[1]);
    expect(second).toContain('1. Gather data');
    expect(second).toContain('3. Write report');
    expect(second).toMatch(/2\. Draw chart.*THIS SUBTASK/);
    expect(second).toContain('Subtask 2 of 3');
  });

  it('sends the paper sampling (temperature 1.0, top-p 0.95) and the output reserve on every request', async () => {
    const backend = new ScriptedBackend(
      {
        plan: [planOf('a', 'b')],
        execute: [submit('a'), submit('b')],
        synthesize: [submit('ab')],
        verify: [verdict(true)],
      },
      { contextWindow: 16_000 },
    );
    await createHarness({ backend, workspace: await tempDir() }).run(TASK);
    expect(backend.calls.length).toBe(5);
    for (const call of backend.calls) {
      expect(call).toMatchObject({ temperature: 1, topP: 0.95, maxOutputTokens: 4_000 });
    }
  });

  it('overrides sampling per role, and null sends none', async () => {
    const backend = new ScriptedBackend({ execute: [submit('a')], verify: [verdict(true)] });
    await createHarness({
      backend,
      workspace: await tempDir(),
      decomposition: false,
      sampling: { topP: null, roles: { verify: { temperature: 0 } } },
      limits: { maxOutputTokens: 1_000 },
    }).run(TASK);
    const [execute, verify] = backend.calls;
    expect(execute).toMatchObject({ temperature: 1, maxOutputTokens: 1_000 });
    expect(execute).not.toHaveProperty('topP');
    expect(verify).toMatchObject({ temperature: 0 });
    expect(verify).not.toHaveProperty('topP');
  });
});

describe('silent losses are reported', () => {
  it('a long answer that cannot be saved emits run-warning and the report counts it', async () => {
    const workspace = await tempDir();
    await mkdir(path.join(workspace, '.harness'), { recursive: true });
    // A file where the answers directory should be: every save under it fails.
    await writeOnDisk(path.join(workspace, '.harness/answers'), 'not a directory');
    const long = `HEAD ${'x'.repeat(20_000)} TAIL`;
    const backend = new ScriptedBackend({
      plan: [planOf('a', 'b')],
      execute: [submit(long), submit('b')],
      synthesize: [submit('ab')],
    });
    const harness = createHarness({ backend, workspace, verification: false });
    const events = collect(harness);
    const result = await harness.run(TASK);
    const warning = events.find((e) => e.type === 'run-warning');
    expect(warning).toMatchObject({ code: 'answer-save-failed', scope: 'subtask-1' });
    expect(result.report.warnings).toEqual({ 'answer-save-failed': 1 });
    expect(textOf(backend.callsFor('execute')[1])).toContain('the full answer could not be saved');
    expect(await readFile(path.join(workspace, '.harness/answers'), 'utf8')).toBe('not a directory');
  });
});

describe('the window guarantee covers tool model calls', () => {
  it('analyze_image calls the vision backend under purpose vision: fitted, observed and reported', async () => {
    const workspace = await tempDir();
    await writeOnDisk(path.join(workspace, 'chart.png'), makePng(4, 4));
    const backend = new ScriptedBackend({
      execute: [toolCall('analyze_image', { path: 'chart.png', question: 'What is shown?' }), submit('seen')],
    });
    const vision = new ScriptedBackend({ vision: [reply('A red square.')] }, { contextWindow: 8_000 });
    const harness = createHarness({
      backend,
      roles: { vision },
      tools: [analyzeImageTool()],
      workspace,
      decomposition: false,
      verification: false,
    });
    const events = collect(harness);
    const result = await harness.run(TASK);
    expect(result.status).toBe('succeeded');
    expect(vision.calls[0]).toMatchObject({ purpose: 'vision', temperature: 1, topP: 0.95, maxOutputTokens: 2_000 });
    const visionEvents = events.filter(
      (e) => (e.type === 'llm-request' || e.type === 'llm-response') && e.purpose === 'vision',
    );
    expect(visionEvents.map((e) => e.type)).toEqual(['llm-request', 'llm-response']);
    expect(result.report.byPurpose.vision).toMatchObject({ calls: 1 });
  });

  it('a vision request that cannot fit its window is an error observation, not a sent overflow', async () => {
    const workspace = await tempDir();
    await writeOnDisk(path.join(workspace, 'chart.png'), makePng(4, 4));
    const backend = new ScriptedBackend({
      execute: [
        toolCall('analyze_image', { path: 'chart.png', question: 'x'.repeat(20_000) }),
        submit('could not see it'),
      ],
    });
    const vision = new ScriptedBackend([], { contextWindow: 2_000 });
    const result = await createHarness({
      backend,
      roles: { vision },
      tools: [analyzeImageTool()],
      workspace,
      decomposition: false,
      verification: false,
    }).run(TASK);
    expect(vision.calls).toHaveLength(0);
    const observation = backend.callsFor('execute')[1]?.messages.at(-1);
    expect(observation).toMatchObject({ role: 'tool', isError: true });
    expect(result.status).toBe('succeeded');
  });
});
