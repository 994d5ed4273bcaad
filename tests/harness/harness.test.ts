import { readFile, rm, writeFile as fsWriteFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Purpose } from '../../src/backend/types.js';
import { HarnessError } from '../../src/errors.js';
import { createHarness } from '../../src/harness/harness.js';
import type { VerifierLike } from '../../src/contracts/roles.js';
import { planOf, reply, submit, toolCall, verdict } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { executeCommandTool } from '../../src/tools/builtin/execute-command.js';
import { hang, tempDir, textOf, writeFile, collect } from './helpers.js';

const TASK = 'Research two river facts and write rivers.md with both, in English.';

function purposes(backend: ScriptedBackend): Array<Purpose | undefined> {
  return backend.calls.map((c) => c.purpose);
}

describe('createHarness: state passing between subtasks', () => {
  it('passes a long answer on bounded, with its head, its tail and the saved full answer named', async () => {
    const long = `ANSWER-HEAD ${'detail '.repeat(5_000)}ANSWER-TAIL`;
    const backend = new ScriptedBackend({
      plan: [planOf('Research', 'Summarise')],
      execute: [submit(long), submit('short summary')],
      synthesize: [submit('done')],
      verify: [verdict(true)],
    });
    const result = await createHarness({ backend, tools: [writeFile], workspace: await tempDir() }).run(TASK);

    expect(result.subtasks[0]?.answer).toBe(long);
    expect(result.subtasks[0]?.answerFile).toBe('.harness/answers/subtask-1.md');
    expect(await readFile(path.join(result.workspace, '.harness/answers/subtask-1.md'), 'utf8')).toBe(long);
    for (const request of [
      backend.callsFor('execute')[1],
      backend.callsFor('synthesize')[0],
      backend.callsFor('verify')[0],
    ]) {
      const text = textOf(request);
      expect(text).toContain('ANSWER-HEAD');
      expect(text).toContain('ANSWER-TAIL');
      expect(text).toContain('.harness/answers/subtask-1.md');
      expect(text.length).toBeLessThan(long.length);
    }
  });

  it('gives subtask k the answers and files of earlier subtasks, in a fresh dialogue without their tool outputs', async () => {
    const backend = new ScriptedBackend({
      plan: [planOf('Find facts', 'Write file')],
      execute: [
        toolCall('write_file', { path: 'notes.md', content: 'Nile is long' }),
        submit('ANSWER-ONE: the Nile is 6650 km', ['notes.md']),
        toolCall('write_file', { path: 'rivers.md', content: '# Rivers\nNile is long' }),
        submit('ANSWER-TWO: wrote rivers.md', ['rivers.md']),
      ],
      synthesize: [submit('Final: rivers.md holds the facts', ['rivers.md'])],
      verify: [verdict(true)],
    });
    const harness = createHarness({ backend, tools: [writeFile], workspace: await tempDir() });
    const result = await harness.run(TASK);

    expect(result.status).toBe('succeeded');
    const executes = backend.callsFor('execute');
    const secondSubtaskFirstCall = executes[2]!;
    expect(secondSubtaskFirstCall.messages).toHaveLength(2);
    const text = textOf(secondSubtaskFirstCall);
    expect(text).toContain('ANSWER-ONE: the Nile is 6650 km');
    expect(text).toContain('notes.md');
    expect(text).toContain(TASK);
    expect(text).not.toContain('TOOL-TRACE');
    // The first subtask's own second call does see its tool output: the marker is real.
    expect(textOf(executes[1])).toContain('TOOL-TRACE');
    expect(result.subtasks.map((s) => [s.id, s.status, s.answer, s.files])).toEqual([
      ['subtask-1', 'completed', 'ANSWER-ONE: the Nile is 6650 km', ['notes.md']],
      ['subtask-2', 'completed', 'ANSWER-TWO: wrote rivers.md', ['rivers.md']],
    ]);
    expect(result.deliverable).toEqual({ answer: 'Final: rivers.md holds the facts', files: ['rivers.md'] });
    expect(await readFile(path.join(result.workspace, 'rivers.md'), 'utf8')).toContain('Nile is long');
    backend.assertComplete();
  });

  it('keeps the original request verbatim in every role prompt', async () => {
    const backend = new ScriptedBackend({
      plan: [planOf('A', 'B')],
      execute: [submit('a'), submit('b')],
      synthesize: [submit('ab')],
      verify: [verdict(false, ['Mention C']), verdict(true)],
      repair: [submit('abc')],
    });
    await createHarness({ backend, workspace: await tempDir() }).run(TASK);
    expect(backend.calls.length).toBe(7);
    for (const call of backend.calls) expect(textOf(call)).toContain(TASK);
  });
});

describe('createHarness: attempts and failures', () => {
  it('retries a failing subtask up to subtaskAttempts, records the failure and goes on', async () => {
    const boom = () => new HarnessError('server-error', 'the provider refused');
    const backend = new ScriptedBackend({
      plan: [planOf('Fragile', 'Sturdy')],
      execute: [boom(), boom(), boom(), submit('sturdy done')],
      synthesize: [submit('only the sturdy part')],
    });
    const harness = createHarness({ backend, workspace: await tempDir(), verification: false });
    const events = collect(harness);
    const result = await harness.run(TASK);

    const [fragile, sturdy] = result.subtasks;
    expect(fragile).toMatchObject({ status: 'failed', attempts: 3 });
    expect(fragile?.error).toContain('the provider refused');
    expect(sturdy).toMatchObject({ status: 'completed', attempts: 1, answer: 'sturdy done' });
    const attempts = events.filter((e) => e.type === 'subtask-attempt');
    expect(attempts.map((e) => [e.subtaskId, e.attempt])).toEqual([
      ['subtask-1', 1],
      ['subtask-1', 2],
      ['subtask-1', 3],
      ['subtask-2', 1],
    ]);
    expect(attempts[1]).toHaveProperty('previousError', expect.stringContaining('the provider refused'));
    // The synthesizer is told which subtask failed.
    const synthesis = textOf(backend.callsFor('synthesize')[0]);
    expect(synthesis).toContain('subtask-1');
    expect(synthesis).toMatch(/FAILED/);
    expect(result.status).toBe('succeeded');
    expect(result.report).toMatchObject({ subtasks: 2, subtaskAttempts: 4, failedSubtasks: 1 });
  });
});

describe('createHarness: malformed JSON fallbacks', () => {
  it('re-asks a malformed plan once with the validation error, then runs one subtask and says so', async () => {
    const backend = new ScriptedBackend({
      plan: [reply('Here is my plan: first research, then write.'), reply('{"subtasks": []}')],
      execute: [submit('did everything')],
      verify: [verdict(true)],
    });
    const harness = createHarness({ backend, workspace: await tempDir() });
    const events = collect(harness);
    const result = await harness.run(TASK);

    const reask = backend.callsFor('plan')[1]!;
    expect(textOf(reask)).toContain('no parseable JSON');
    const planEvent = events.find((e) => e.type === 'plan-created');
    expect(planEvent).toMatchObject({ fallback: 'single-subtask' });
    expect(result.plan).toHaveLength(1);
    expect(result.status).toBe('succeeded');
    expect(result.deliverable.answer).toBe('did everything');
  });

  it('accepts a plan fixed on the re-ask, parsed out of a code fence', async () => {
    const fenced = '```json\n' + JSON.stringify({ subtasks: [{ title: 'One', objective: 'Do one' }] }) + '\n```';
    const backend = new ScriptedBackend({
      plan: [reply('{"subtasks":[{"title":"One"}]}'), reply(`Sure! ${fenced}`)],
      execute: [submit('one')],
      verify: [verdict(true)],
    });
    const harness = createHarness({ backend, workspace: await tempDir() });
    const events = collect(harness);
    const result = await harness.run(TASK);
    expect(textOf(backend.callsFor('plan')[1])).toContain('subtasks.0.objective');
    expect(result.plan.map((s) => s.title)).toEqual(['One']);
    expect(events.find((e) => e.type === 'plan-created')).not.toHaveProperty('fallback');
  });

  it('asks again once, stating the cap, for a plan over limits.maxSubtasks, and runs the shorter plan', async () => {
    const long = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'Assemble owls.md'];
    const backend = new ScriptedBackend({
      plan: [planOf(...long), planOf('Facts', 'Assemble owls.md')],
      execute: [submit('facts'), submit('assembled')],
      synthesize: [submit('owls.md written')],
    });
    const harness = createHarness({ backend, workspace: await tempDir(), verification: false });
    const events = collect(harness);
    const result = await harness.run(TASK);
    // Cut, the plan would have lost its final assembly step.
    expect(result.plan.map((s) => s.title)).toEqual(['Facts', 'Assemble owls.md']);
    const reAsk = backend.callsFor('plan')[1]?.messages.at(-1);
    expect(reAsk).toMatchObject({ role: 'user' });
    expect(textOf({ messages: [reAsk!] })).toContain('Your plan has 8 subtasks; the limit is 6.');
    const created = events.find((e) => e.type === 'plan-created');
    expect(created).not.toHaveProperty('fallback');
    expect(created).toMatchObject({
      reason:
        'The planner returned 8 subtasks, more than limits.maxSubtasks (6); asked again with the cap stated, it ' +
        'returned 2.',
    });
  });

  it('cuts a plan to its first maxSubtasks only when the plan asked again is still too long, and says so', async () => {
    const backend = new ScriptedBackend({
      plan: [planOf('a', 'b', 'c', 'd', 'e'), planOf('a', 'b', 'c')],
      execute: [submit('a'), submit('b')],
      synthesize: [submit('ab')],
    });
    const harness = createHarness({
      backend,
      workspace: await tempDir(),
      verification: false,
      limits: { maxSubtasks: 2 },
    });
    const events = collect(harness);
    const result = await harness.run(TASK);
    expect(result.plan.map((s) => s.title)).toEqual(['a', 'b']);
    expect(events.find((e) => e.type === 'plan-created')).toMatchObject({
      fallback: 'truncated',
      reason:
        'The planner returned 5 subtasks, more than limits.maxSubtasks (2); asked again with the cap stated, it ' +
        'returned 3; kept the first 2.',
    });
    expect(textOf(backend.callsFor('plan')[0])).toContain('at most 2 subtasks');
  });

  it('reports an unparseable verdict as unverified and does not repair', async () => {
    const backend = new ScriptedBackend({
      execute: [submit('done')],
      // The first request and its re-ask, then a fresh request and its re-ask.
      verify: [reply('Looks fine to me.'), reply('{"passed": "yes"}'), reply('Fine.'), reply('{"passed": "yes"}')],
    });
    const result = await createHarness({ backend, workspace: await tempDir(), decomposition: false }).run(TASK);
    expect(result.verdicts).toMatchObject([{ attempt: 1, status: 'unverified', passed: false, defects: [] }]);
    expect(backend.callsFor('repair')).toHaveLength(0);
    expect(result.status).toBe('unverified');
    expect(result.report.firstPassVerified).toBeNull();
    expect(result.report.repairs).toBe(0);
  });
});

describe('createHarness: verification by content and repair', () => {
  it('shows the verifier previews of delivered and attached files', async () => {
    const source = path.join(await tempDir(), 'brief.txt');
    await fsWriteFile(source, 'ATTACHMENT-CONTENT: use metric units');
    const backend = new ScriptedBackend({
      execute: [
        toolCall('write_file', { path: 'rivers.md', content: 'FILE-BODY: Nile 6650 km' }),
        submit('see rivers.md', ['rivers.md']),
      ],
      verify: [verdict(true)],
    });
    const result = await createHarness({
      backend,
      tools: [writeFile],
      workspace: await tempDir(),
      decomposition: false,
    }).run({
      task: TASK,
      attachments: [source],
    });
    const verify = textOf(backend.callsFor('verify')[0]);
    expect(verify).toContain('FILE-BODY: Nile 6650 km');
    expect(verify).toContain('ATTACHMENT-CONTENT: use metric units');
    expect(verify).toContain('attachments/brief.txt');
    expect(await readFile(path.join(result.workspace, 'attachments/brief.txt'), 'utf8')).toContain(
      'ATTACHMENT-CONTENT',
    );
    expect(textOf(backend.callsFor('execute')[0])).toContain('attachments/brief.txt');
  });

  it('finds a claimed but missing file without the model, and repairs it', async () => {
    const backend = new ScriptedBackend({
      execute: [submit('I wrote report.md', ['report.md'])],
      verify: [verdict(true), verdict(true)],
      repair: [
        toolCall('write_file', { path: 'report.md', content: 'now real' }),
        submit('report.md written', ['report.md']),
      ],
    });
    const harness = createHarness({ backend, tools: [writeFile], workspace: await tempDir(), decomposition: false });
    const result = await harness.run(TASK);
    const first = result.verdicts[0]!;
    expect(first).toMatchObject({ status: 'failed', passed: false });
    expect(first.defects).toEqual([expect.objectContaining({ artifact: 'report.md' })]);
    expect(textOf(backend.callsFor('verify')[0])).toContain('MISSING');
    expect(textOf(backend.callsFor('repair')[0])).toContain('report.md');
    expect(result.verdicts[1]).toMatchObject({ status: 'passed', passed: true });
    expect(result.status).toBe('succeeded');
    expect(result.report).toMatchObject({ firstPassVerified: false, repairs: 1, repairRecovered: true });
  });

  it('targets repair at the defects and never re-runs a subtask once verification started', async () => {
    const backend = new ScriptedBackend({
      plan: [planOf('Research', 'Write')],
      execute: [submit('facts'), submit('draft')],
      synthesize: [submit('draft without conclusion')],
      verify: [
        verdict(false, [{ description: 'DEFECT-X: the conclusion is missing', artifact: 'rivers.md' }]),
        verdict(true),
      ],
      repair: [submit('draft with conclusion')],
    });
    const harness = createHarness({ backend, workspace: await tempDir() });
    const events = collect(harness);
    const result = await harness.run(TASK);

    const order = purposes(backend);
    const firstVerify = order.indexOf('verify');
    expect(order.slice(firstVerify)).toEqual(['verify', 'repair', 'verify']);
    const repairPrompt = textOf(backend.callsFor('repair')[0]);
    expect(repairPrompt).toContain('DEFECT-X: the conclusion is missing');
    expect(repairPrompt).toContain('draft without conclusion');
    expect(result.deliverable.answer).toBe('draft with conclusion');
    expect(events.find((e) => e.type === 'repair-start')).toMatchObject({ attempt: 1 });
    expect(events.find((e) => e.type === 'repair-finish')).toMatchObject({ status: 'completed' });
  });

  it('stops after repairAttempts repairs and fails the run with the remaining defects', async () => {
    const backend = new ScriptedBackend({
      execute: [submit('v0')],
      verify: [verdict(false, ['still wrong']), verdict(false, ['still wrong']), verdict(false, ['still wrong'])],
      repair: [submit('v1'), submit('v2')],
    });
    const result = await createHarness({
      backend,
      workspace: await tempDir(),
      decomposition: false,
      limits: { repairAttempts: 2 },
    }).run(TASK);
    expect(backend.callsFor('repair')).toHaveLength(2);
    expect(result.verdicts).toHaveLength(3);
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('verification-failed');
    expect(result.report).toMatchObject({ repairs: 2, repairRecovered: false, firstPassVerified: false });
    backend.assertComplete();
  });

  it('gives each repair at most repairIterations iterations', async () => {
    const backend = new ScriptedBackend({
      execute: [submit('v0')],
      verify: [verdict(false, ['wrong']), verdict(false, ['wrong'])],
      repair: [
        toolCall('write_file', { path: 'a.md', content: 'a' }),
        toolCall('write_file', { path: 'b.md', content: 'b' }),
      ],
    });
    const result = await createHarness({
      backend,
      tools: [writeFile],
      workspace: await tempDir(),
      decomposition: false,
      limits: { repairAttempts: 1, repairIterations: 2 },
    }).run(TASK);
    expect(backend.callsFor('repair')).toHaveLength(2);
    expect(result.status).toBe('failed');
  });
});

describe('createHarness: the four configurations', () => {
  const cases: Array<[string, boolean, boolean, Purpose[]]> = [
    ['DIRECT', false, false, ['execute']],
    ['DECOMP', true, false, ['plan', 'execute', 'execute', 'synthesize']],
    ['VERIFY', false, true, ['execute', 'verify']],
    ['FULL', true, true, ['plan', 'execute', 'execute', 'synthesize', 'verify']],
  ];
  it.each(cases)('%s calls exactly the roles it enables', async (_name, decomposition, verification, expected) => {
    const backend = new ScriptedBackend({
      plan: [planOf('a', 'b')],
      execute: decomposition ? [submit('a'), submit('b')] : [submit('all')],
      synthesize: [submit('ab')],
      verify: [verdict(true)],
    });
    const harness = createHarness({ backend, workspace: await tempDir(), decomposition, verification });
    const events = collect(harness);
    const result = await harness.run(TASK);
    expect(purposes(backend)).toEqual(expected);
    expect(result.status).toBe('succeeded');
    expect(events[0]).toMatchObject({ type: 'run-start', decomposition, verification });
    expect(result.verdicts).toHaveLength(verification ? 1 : 0);
    expect(result.report.firstPassVerified).toBe(verification ? true : null);
    if (!decomposition)
      expect(events.find((e) => e.type === 'plan-created')).toMatchObject({ fallback: 'decomposition-off' });
  });
});

describe('createHarness: ending early', () => {
  it('ends cleanly with status aborted when aborted mid-subtask', async () => {
    const backend = new ScriptedBackend({
      plan: [planOf('a', 'b')],
      execute: [submit('a done'), toolCall('hang', {})],
    });
    const controller = new AbortController();
    const harness = createHarness({ backend, tools: [hang], workspace: await tempDir() });
    const events = collect(harness);
    harness.on('tool-call', (e) => {
      if (e.toolName === 'hang') controller.abort();
    });
    const result = await harness.run({ task: TASK, signal: controller.signal });
    expect(result.status).toBe('aborted');
    expect(result.error?.code).toBe('aborted');
    expect(result.subtasks.map((s) => s.status)).toEqual(['completed', 'failed']);
    expect(result.deliverable.answer).toBe('a done');
    expect(backend.callsFor('synthesize')).toHaveLength(0);
    expect(events.at(-1)).toMatchObject({ type: 'run-finish', result });
    expect(result.report.modelCalls).toBe(3);
  });

  it('ends with status timeout when the run exceeds limits.timeoutMs', async () => {
    const backend = new ScriptedBackend({ execute: [toolCall('hang', {})] });
    const result = await createHarness({
      backend,
      tools: [hang],
      workspace: await tempDir(),
      decomposition: false,
      limits: { timeoutMs: 50 },
    }).run(TASK);
    expect(result.status).toBe('timeout');
    expect(result.error?.code).toBe('timeout');
  });

  it('ends with status failed when the run-wide iteration cap is used up', async () => {
    const backend = new ScriptedBackend((request) =>
      request.purpose === 'plan' ? planOf('a', 'b') : toolCall('write_file', { path: 'x.md', content: 'x' }),
    );
    const harness = createHarness({
      backend,
      tools: [writeFile],
      workspace: await tempDir(),
      limits: { maxRunIterations: 4 },
    });
    const events = collect(harness);
    const result = await harness.run(TASK);
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('budget-exhausted');
    expect(backend.callsFor('execute')).toHaveLength(4);
    // The first subtask's loop used the whole cap; no retry and no later subtask got any.
    expect(result.subtasks.map((s) => s.status)).toEqual(['failed', 'skipped']);
    expect(events.some((e) => e.type === 'run-error')).toBe(true);
  });

  it('resolves with a failed result when the planner backend fails', async () => {
    const backend = new ScriptedBackend({ plan: [new HarnessError('authentication', 'bad key')] });
    const result = await createHarness({ backend, workspace: await tempDir() }).run(TASK);
    expect(result).toMatchObject({ status: 'failed', error: { code: 'authentication' } });
  });
});

describe('createHarness: wiring', () => {
  it('sends each purpose to its own backend when roles say so', async () => {
    const main = new ScriptedBackend(
      { plan: [planOf('a', 'b')], execute: [submit('a'), submit('b')], synthesize: [submit('ab')] },
      { modelId: 'main' },
    );
    const checker = new ScriptedBackend({ verify: [verdict(false, ['fix']), verdict(true)] }, { modelId: 'cheap' });
    const fixer = new ScriptedBackend({ repair: [submit('fixed')] }, { modelId: 'fixer' });
    const harness = createHarness({
      backend: main,
      roles: { verify: checker, repair: fixer },
      workspace: await tempDir(),
    });
    const events = collect(harness);
    const result = await harness.run(TASK);
    expect(purposes(main)).toEqual(['plan', 'execute', 'execute', 'synthesize']);
    expect(purposes(checker)).toEqual(['verify', 'verify']);
    expect(purposes(fixer)).toEqual(['repair']);
    const verifyRequests = events.filter((e) => e.type === 'llm-request' && e.purpose === 'verify');
    expect(verifyRequests.map((e) => (e.type === 'llm-request' ? e.modelId : ''))).toEqual(['cheap', 'cheap']);
    expect(result.report.byPurpose.verify?.calls).toBe(2);
  });

  it('uses a replaced verifier and planner', async () => {
    const backend = new ScriptedBackend({ execute: [submit('one'), submit('two')], synthesize: [submit('both')] });
    const seen: string[] = [];
    const verifier: VerifierLike = {
      async verify(input) {
        seen.push(input.deliverable.answer);
        return {
          attempt: input.attempt ?? 1,
          status: 'passed',
          passed: true,
          defects: [],
          imagesSeen: 0,
          imagesSkipped: 0,
        };
      },
    };
    const planner = {
      async plan() {
        return {
          subtasks: [
            { id: 'x', title: 'One', objective: 'one', expectedOutput: '' },
            { id: 'y', title: 'Two', objective: 'two', expectedOutput: '' },
          ],
        };
      },
    };
    const result = await createHarness({ backend, components: { verifier, planner }, workspace: await tempDir() }).run(
      TASK,
    );
    expect(seen).toEqual(['both']);
    expect(result.plan.map((s) => s.id)).toEqual(['subtask-1', 'subtask-2']);
    expect(result.verdicts[0]?.status).toBe('passed');
    expect(backend.callsFor('verify')).toHaveLength(0);
  });

  it('emits the events of a run in order, run-finish carrying the result', async () => {
    const backend = new ScriptedBackend({
      plan: [planOf('a', 'b')],
      execute: [toolCall('write_file', { path: 'a.md', content: 'a' }), submit('a', ['a.md']), submit('b')],
      synthesize: [submit('ab', ['a.md'])],
      verify: [verdict(false, ['short']), verdict(true)],
      repair: [submit('ab+', ['a.md'])],
    });
    const harness = createHarness({
      backend,
      tools: [writeFile],
      workspace: await tempDir(),
      generateId: () => 'run-fixed',
    });
    const events = collect(harness);
    const result = await harness.run(TASK);
    const lifecycle = events
      .filter((e) => !((e.type === 'tool-call' || e.type === 'tool-result') && e.toolName === 'submit_answer'))
      .map((e) => e.type)
      .filter((t) => !t.startsWith('llm-') && !t.startsWith('memory-'));
    expect(lifecycle).toEqual([
      'run-start',
      'plan-created',
      'subtask-start',
      'subtask-attempt',
      'tool-call',
      'tool-result',
      'subtask-finish',
      'subtask-start',
      'subtask-attempt',
      'subtask-finish',
      'synthesis-finish',
      'verify-finish',
      'repair-start',
      'repair-finish',
      'verify-finish',
      'run-finish',
    ]);
    expect(events.every((e) => e.runId === 'run-fixed')).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'run-finish', result });
    expect(events[0]).toMatchObject({ type: 'run-start', goal: TASK, workspace: result.workspace, warnings: [] });
    const llm = events.filter((e) => e.type === 'llm-response');
    expect(llm).toHaveLength(backend.calls.length);
    expect(result.report).toMatchObject({
      modelCalls: backend.calls.length,
      toolCalls: 1,
      toolCallsByTool: { write_file: 1 },
      byPurpose: {
        plan: { calls: 1 },
        execute: { calls: 3 },
        synthesize: { calls: 1 },
        verify: { calls: 2 },
        repair: { calls: 1 },
      },
    });
    expect(result.report.peakRequestTokens).toBeGreaterThan(0);
    expect(result.report.inputTokens).toBeGreaterThan(0);
    expect(JSON.parse(JSON.stringify(result.report))).toEqual(result.report);
  });

  it('keeps two harnesses apart: listeners, workspaces and runs', async () => {
    const make = () => new ScriptedBackend({ execute: [submit('done')] });
    const one = createHarness({ backend: make(), decomposition: false, verification: false });
    const two = createHarness({ backend: make(), decomposition: false, verification: false });
    const seenByOne: string[] = [];
    one.on('run-start', (e) => seenByOne.push(e.runId));
    const [a, b] = await Promise.all([one.run({ task: TASK, runId: 'r1' }), two.run({ task: TASK, runId: 'r2' })]);
    // Neither run was given a workspace, so each got its own temp directory; remove them.
    await Promise.all([a, b].map((r) => rm(r.workspace, { recursive: true, force: true })));
    expect(seenByOne).toEqual(['r1']);
    expect(a.workspace).not.toBe(b.workspace);
    expect(a.status).toBe('succeeded');
    expect(b.status).toBe('succeeded');
  });

  it('returns an unsubscribe function from on()', async () => {
    const harness = createHarness({
      backend: new ScriptedBackend({ execute: [submit('1'), submit('2')] }),
      decomposition: false,
      verification: false,
      workspace: await tempDir(),
    });
    let count = 0;
    const off = harness.on('run-finish', () => count++);
    await harness.run(TASK);
    off();
    await harness.run(TASK);
    expect(count).toBe(1);
  });

  it('uses prompt overrides', async () => {
    const backend = new ScriptedBackend({ plan: [planOf('a')], execute: [submit('a')], verify: [verdict(true)] });
    await createHarness({
      backend,
      workspace: await tempDir(),
      prompts: { plan: 'CUSTOM PLANNER, max {{maxSubtasks}}', verify: 'CUSTOM VERIFIER', execute: 'CUSTOM EXECUTOR' },
    }).run(TASK);
    // Each custom prompt gets the run's rule on untrusted data appended.
    const rule =
      /\n\nUntrusted data \([^)]*\) appears only between ⟦data-[0-9a-f]{16}⟧ and ⟦\/data-[0-9a-f]{16}⟧;[^\n]*$/;
    const system = (purpose: 'plan' | 'verify' | 'execute') =>
      String(backend.callsFor(purpose)[0]?.messages[0]?.content);
    expect(system('plan').replace(rule, '')).toBe('CUSTOM PLANNER, max 6');
    expect(system('verify').replace(rule, '')).toBe('CUSTOM VERIFIER');
    expect(system('execute').replace(rule, '')).toBe('CUSTOM EXECUTOR');
    for (const purpose of ['plan', 'verify', 'execute'] as const) expect(system(purpose)).toMatch(rule);
  });

  it('puts warnings reported by tools into run-start', async () => {
    const harness = createHarness({
      backend: new ScriptedBackend({ execute: [submit('x')] }),
      tools: [executeCommandTool({ sandbox: 'none' })],
      decomposition: false,
      verification: false,
      workspace: await tempDir(),
    });
    const events = collect(harness);
    await harness.run(TASK);
    expect(events[0]).toMatchObject({ type: 'run-start' });
    const warnings = (events[0] as { warnings: string[] }).warnings;
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^execute_command: Sandbox disabled/);
  });

  it('rejects invalid options and input with messages naming them', async () => {
    const backend = new ScriptedBackend([]);
    expect(() => createHarness({ backend, limits: { maxSubtasks: 0 } })).toThrow(/limits\.maxSubtasks/);
    expect(() => createHarness({ backend, verifcation: false } as never)).toThrow(HarnessError);
    expect(() => createHarness({ backend: {} as never })).toThrow(/backend/);
    const harness = createHarness({ backend });
    await expect(harness.run('  ')).rejects.toMatchObject({ code: 'invalid-input' });
  });

  it('fails the run when an attachment cannot be copied in', async () => {
    const backend = new ScriptedBackend([]);
    const result = await createHarness({ backend, workspace: await tempDir() }).run({
      task: TASK,
      attachments: [path.join(await tempDir(), 'missing.pdf')],
    });
    expect(result).toMatchObject({ status: 'failed', error: { code: 'invalid-input' } });
    expect(backend.calls).toHaveLength(0);
  });
});
