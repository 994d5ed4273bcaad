import { readFile, realpath, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import {
  createHarness,
  type ExecutionMemory,
  type ExecutorLike,
  type ExecutorResult,
  type ExecutorRunInput,
  type HarnessEvent,
  type PendingRequest,
  type Purpose,
  type RepairerLike,
  type RunReport,
  type SynthesizerLike,
  type Verdict,
} from '../../src/index.js';
import {
  PassThroughMemory,
  ScriptedBackend,
  planOf,
  reply,
  submit,
  toolCall,
  verdict,
} from '../../src/testing/index.js';
import { hang, tempDir, textOf, writeFile, collect } from './helpers.js';

const TASK = 'Collect two facts about owls and write owls.md with both.';

/** Lifecycle event types, without the per-call llm/tool/memory events. */
function lifecycle(events: readonly HarnessEvent[]): string[] {
  return events.map((e) => e.type).filter((t) => !/^(llm|tool|memory)-/.test(t));
}

function executorResult(partial: Partial<ExecutorResult>): ExecutorResult {
  return {
    status: 'completed',
    answer: '',
    files: [],
    iterations: 1,
    usage: { inputTokens: 0, outputTokens: 0 },
    peakRequestTokens: 0,
    ...partial,
  };
}

describe('createHarness: options', () => {
  it('rejects bad memory options when the harness is created, not when it runs', () => {
    const backend = new ScriptedBackend([]);
    expect(() => createHarness({ backend, memory: { compressAt: 2 } })).toThrow(
      expect.objectContaining({ code: 'invalid-options', message: expect.stringContaining('memory.compressAt') }),
    );
    expect(() => createHarness({ backend, memory: { keepRecentRounds: 2 } })).not.toThrow();
  });

  it('runs in a fresh temp directory when no workspace is given, and in the given one otherwise', async () => {
    const make = () => new ScriptedBackend({ execute: [submit('done')] });
    const fresh = await createHarness({ backend: make(), decomposition: false, verification: false }).run(TASK);
    try {
      expect((await stat(fresh.workspace)).isDirectory()).toBe(true);
      expect(path.isAbsolute(fresh.workspace)).toBe(true);
    } finally {
      await rm(fresh.workspace, { recursive: true, force: true });
    }
    const dir = path.join(await tempDir(), 'not-yet-there');
    const given = await createHarness({
      backend: make(),
      decomposition: false,
      verification: false,
      workspace: dir,
    }).run(TASK);
    expect(await realpath(given.workspace)).toBe(await realpath(dir));
  });

  it('types on() per event', () => {
    const harness = createHarness({ backend: new ScriptedBackend([]) });
    harness.on('verify-finish', (e) => expectTypeOf(e.verdict).toEqualTypeOf<Verdict>());
    harness.on('run-finish', (e) => expectTypeOf(e.result.report).toEqualTypeOf<RunReport>());
    // @ts-expect-error: not an event type
    harness.on('no-such-event', () => undefined);
  });
});

describe('createHarness: attempts and fallbacks', () => {
  it('runs a retry in a fresh dialogue that says why the last attempt failed', async () => {
    const backend = new ScriptedBackend({
      plan: [planOf('Write x.md')],
      execute: [
        toolCall('write_file', { path: 'x.md', content: 'x' }),
        reply(''),
        reply(''),
        reply(''),
        submit('second try'),
      ],
    });
    const result = await createHarness({
      backend,
      tools: [writeFile],
      workspace: await tempDir(),
      verification: false,
    }).run(TASK);
    expect(result.subtasks[0]).toMatchObject({ status: 'completed', attempts: 2, answer: 'second try' });
    const retry = backend.callsFor('execute').at(-1)!;
    expect(retry.messages).toHaveLength(2);
    expect(textOf(retry)).toContain('A previous attempt at this subtask failed');
    expect(textOf(retry)).not.toContain('TOOL-TRACE');
  });

  it('without decomposition runs exactly one loop on the request: no plan wording, no retry, no synthesis', async () => {
    const backend = new ScriptedBackend({
      execute: [toolCall('write_file', { path: 'owls.md', content: 'Owls hunt at night.' }), reply(''), reply('')],
    });
    const harness = createHarness({
      backend,
      tools: [writeFile],
      workspace: await tempDir(),
      decomposition: false,
      verification: false,
      limits: { maxIterations: 3, subtaskAttempts: 3 },
    });
    const events = collect(harness);
    const result = await harness.run(TASK);
    // The loop used its 3 iterations; a DIRECT run has no second attempt and no synthesis loop after it.
    expect(backend.calls.map((c) => c.purpose)).toEqual(['execute', 'execute', 'execute']);
    expect(result).toMatchObject({ status: 'failed', error: { code: 'budget-exhausted' } });
    expect(result.error?.message).toContain('used its 3 iteration(s)');
    expect(result.deliverable).toEqual({ answer: '', files: ['owls.md'] });
    expect(result.subtasks.map((s) => [s.status, s.attempts])).toEqual([['failed', 1]]);
    expect(events.find((e) => e.type === 'run-error')).toMatchObject({ stage: 'execute' });
    expect(events.find((e) => e.type === 'synthesis-finish')).toMatchObject({ status: 'failed' });
    const first = backend.calls[0]!;
    expect(first.messages[1]?.content).toContain(`## Original request (verbatim from the user)\n${TASK}`);
    for (const call of backend.calls) expect(textOf(call)).not.toMatch(/\bplan\b|subtask|other loops/i);
  });

  it('without decomposition the loop’s answer and files are the deliverable verification judges', async () => {
    const backend = new ScriptedBackend({
      execute: [toolCall('write_file', { path: 'owls.md', content: 'Owls hunt at night.' }), submit('Wrote owls.md.')],
      verify: [verdict(true)],
    });
    const result = await createHarness({
      backend,
      tools: [writeFile],
      workspace: await tempDir(),
      decomposition: false,
    }).run(TASK);
    expect(result.status).toBe('succeeded');
    expect(result.deliverable).toEqual({ answer: 'Wrote owls.md.', files: ['owls.md'] });
    expect(backend.callsFor('synthesize')).toHaveLength(0);
    // The loop's answer is the deliverable's: the verifier is shown no subtask answers beside it.
    expect(backend.callsFor('verify')[0]?.messages[1]?.content).not.toMatch(/subtask/i);
    expect(textOf(backend.callsFor('verify')[0])).toContain('Owls hunt at night.');
  });

  it('honours limits.subtaskAttempts', async () => {
    const backend = new ScriptedBackend({
      plan: [planOf('Write x.md')],
      execute: [new Error('refused')],
      synthesize: [submit('nothing to report')],
    });
    const result = await createHarness({
      backend,
      workspace: await tempDir(),
      verification: false,
      limits: { subtaskAttempts: 1 },
    }).run(TASK);
    expect(result.subtasks[0]).toMatchObject({ status: 'failed', attempts: 1 });
    backend.assertComplete();
  });

  it('re-asks a malformed verdict once with the validation error and reports it as unverified in verify-finish', async () => {
    const backend = new ScriptedBackend({
      execute: [submit('done')],
      // The first request and its re-ask, then a fresh request and its re-ask.
      verify: [reply('{"passed": "yes"}'), reply('still not JSON'), reply('{"passed": "yes"}'), reply('not JSON')],
    });
    const harness = createHarness({ backend, workspace: await tempDir(), decomposition: false });
    const events = collect(harness);
    await harness.run(TASK);
    const reask = backend.callsFor('verify')[1]!;
    expect(textOf(reask)).toContain('passed: Invalid input');
    expect(events.find((e) => e.type === 'verify-finish')).toMatchObject({
      verdict: { status: 'unverified' },
      passed: false,
    });
  });
});

describe('createHarness: the synthesizer', () => {
  it('may use tools to assemble the deliverable file', async () => {
    const backend = new ScriptedBackend({
      plan: [planOf('Fact one', 'Fact two')],
      execute: [submit('Owls are nocturnal'), submit('Owls can rotate their heads 270 degrees')],
      synthesize: [
        toolCall('write_file', { path: 'owls.md', content: '# Owls\n- nocturnal\n- 270 degrees' }),
        submit('owls.md holds both facts', ['owls.md']),
      ],
      verify: [verdict(true)],
    });
    const result = await createHarness({ backend, tools: [writeFile], workspace: await tempDir() }).run(TASK);
    expect(result.deliverable).toEqual({ answer: 'owls.md holds both facts', files: ['owls.md'] });
    expect(await readFile(path.join(result.workspace, 'owls.md'), 'utf8')).toContain('270 degrees');
    const synthesis = textOf(backend.callsFor('synthesize')[0]);
    expect(synthesis).toContain('Owls are nocturnal');
    expect(synthesis).toContain('270 degrees');
    expect(textOf(backend.callsFor('verify')[0])).toContain('- nocturnal');
    expect(result.report.toolCallsByTool).toEqual({ write_file: 1 });
  });
});

describe('createHarness: ending early', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('ends with status timeout, the partial deliverable and the report', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const backend = new ScriptedBackend({
      plan: [planOf('a', 'b')],
      execute: [submit('a done', []), toolCall('hang', {})],
    });
    const harness = createHarness({
      backend,
      tools: [hang],
      workspace: await tempDir(),
      limits: { timeoutMs: 60_000 },
    });
    const events = collect(harness);
    // The clock jumps past the deadline only once the second subtask is stuck in its tool.
    harness.on('tool-call', (e) => {
      if (e.toolName === 'hang') setImmediate(() => vi.advanceTimersByTime(60_000));
    });
    const result = await harness.run(TASK);
    expect(result).toMatchObject({ status: 'timeout', error: { code: 'timeout' } });
    expect(result.error?.message).toContain('limits.timeoutMs');
    expect(result.subtasks.map((s) => s.status)).toEqual(['completed', 'failed']);
    expect(result.deliverable).toEqual({ answer: 'a done', files: [] });
    expect(result.report).toMatchObject({ modelCalls: 3, subtasks: 2, subtaskAttempts: 2 });
    expect(backend.callsFor('synthesize')).toHaveLength(0);
    expect(events.at(-1)).toMatchObject({ type: 'run-finish', result });
  });

  it('ends with budget-exhausted, the partial deliverable, and run-error just before run-finish', async () => {
    const backend = new ScriptedBackend((request) => {
      if (request.purpose === 'plan') return planOf('a', 'b');
      return textOf(request).includes('Subtask 1 of 2')
        ? submit('a done', [])
        : toolCall('write_file', { path: 'x.md', content: 'x' });
    });
    const harness = createHarness({
      backend,
      tools: [writeFile],
      workspace: await tempDir(),
      limits: { maxRunIterations: 4 },
    });
    const events = collect(harness);
    const result = await harness.run(TASK);
    expect(result).toMatchObject({ status: 'failed', error: { code: 'budget-exhausted' } });
    expect(result.deliverable.answer).toBe('a done');
    expect(result.subtasks.map((s) => [s.status, s.attempts])).toEqual([
      ['completed', 1],
      ['failed', 1],
    ]);
    expect(backend.callsFor('execute')).toHaveLength(4);
    expect(lifecycle(events).slice(-2)).toEqual(['run-error', 'run-finish']);
    expect(events.find((e) => e.type === 'run-error')).toMatchObject({
      error: { code: 'budget-exhausted' },
      stage: 'execute',
    });
    expect(result.report.modelCalls).toBe(5);
  });

  it('ends with status aborted during verification, keeping the synthesized deliverable', async () => {
    const controller = new AbortController();
    const backend = new ScriptedBackend({
      plan: [planOf('a', 'b')],
      execute: [submit('a'), submit('b')],
      synthesize: [submit('a and b')],
      verify: [() => new Promise(() => undefined)],
    });
    const harness = createHarness({ backend, workspace: await tempDir() });
    const events = collect(harness);
    harness.on('llm-request', (e) => {
      if (e.purpose === 'verify') setImmediate(() => controller.abort());
    });
    const result = await harness.run({ task: TASK, signal: controller.signal });
    expect(result).toMatchObject({ status: 'aborted', error: { code: 'aborted' } });
    expect(result.deliverable).toEqual({ answer: 'a and b', files: [] });
    expect(result.verdicts).toEqual([]);
    expect(backend.callsFor('repair')).toHaveLength(0);
    expect(events.at(-1)).toMatchObject({ type: 'run-finish', result });
  });

  it('makes no model call when the signal is already aborted', async () => {
    const backend = new ScriptedBackend([]);
    const harness = createHarness({ backend, workspace: await tempDir() });
    const events = collect(harness);
    const result = await harness.run({ task: TASK, signal: AbortSignal.abort() });
    expect(result.status).toBe('aborted');
    expect(backend.calls).toHaveLength(0);
    expect(lifecycle(events)).toEqual(['run-start', 'run-finish']);
  });
});

describe('createHarness: the report', () => {
  it('holds every metric as plain JSON', async () => {
    const backend = new ScriptedBackend({
      plan: [planOf('a', 'b')],
      execute: [toolCall('write_file', { path: 'a.md', content: 'a' }), submit('a', ['a.md']), submit('b')],
      synthesize: [submit('ab', ['a.md'])],
      verify: [verdict(false, ['short']), verdict(true)],
      repair: [submit('ab+', ['a.md'])],
    });
    let now = 1_000;
    const result = await createHarness({
      backend,
      tools: [writeFile],
      workspace: await tempDir(),
      now: () => (now += 10),
    }).run(TASK);
    const report = result.report;
    expect(Object.keys(report).sort()).toEqual(
      [
        'wallTimeMs',
        'modelCalls',
        'inputTokens',
        'outputTokens',
        'byPurpose',
        'toolCalls',
        'toolCallsByTool',
        'peakRequestTokens',
        'subtasks',
        'subtaskAttempts',
        'failedSubtasks',
        'firstPassVerified',
        'repairs',
        'repairRecovered',
        'truncations',
        'compressions',
        'prunes',
        'cacheBreaks',
        'warnings',
        'cost',
        'resumes',
        'writeConflicts',
      ].sort(),
    );
    expect(report).toMatchObject({
      modelCalls: 8,
      toolCalls: 1,
      toolCallsByTool: { write_file: 1 },
      subtasks: 2,
      subtaskAttempts: 2,
      failedSubtasks: 0,
      firstPassVerified: false,
      repairs: 1,
      repairRecovered: true,
      compressions: 0,
      prunes: 0,
    });
    expect(report.wallTimeMs).toBeGreaterThan(0);
    const purposes = Object.keys(report.byPurpose).sort();
    expect(purposes).toEqual(['execute', 'plan', 'repair', 'synthesize', 'verify']);
    const sum = (field: 'calls' | 'inputTokens' | 'outputTokens') =>
      Object.values(report.byPurpose).reduce((total, usage) => total + (usage?.[field] ?? 0), 0);
    expect(sum('calls')).toBe(report.modelCalls);
    expect(sum('inputTokens')).toBe(report.inputTokens);
    expect(sum('outputTokens')).toBe(report.outputTokens);
    expect(report.outputTokens).toBeGreaterThan(0);
    expect(report.peakRequestTokens).toBeGreaterThan(0);
    expect(JSON.parse(JSON.stringify(result))).toEqual(result);
  });
});

describe('createHarness: replaced components', () => {
  it('runs every loop (execute, synthesize, repair) through a replaced executor', async () => {
    const inputs: ExecutorRunInput[] = [];
    const executor: ExecutorLike = {
      async run(input) {
        inputs.push(input);
        return executorResult({ answer: `${input.purpose}:${input.scope}`, iterations: 2 });
      },
    };
    const backend = new ScriptedBackend({
      plan: [planOf('a', 'b')],
      verify: [verdict(false, ['DEFECT-Q']), verdict(true)],
    });
    const result = await createHarness({ backend, components: { executor }, workspace: await tempDir() }).run(TASK);
    expect(inputs.map((i) => [i.purpose, i.scope])).toEqual([
      ['execute', 'subtask-1'],
      ['execute', 'subtask-2'],
      ['synthesize', 'synthesis'],
      ['repair', 'repair-1'],
    ]);
    expect(inputs.every((i) => i.request === TASK)).toBe(true);
    expect(inputs[1]?.priorState).toContain('execute:subtask-1');
    expect(inputs[3]?.objective).toContain('DEFECT-Q');
    expect(result).toMatchObject({ status: 'succeeded', deliverable: { answer: 'repair:repair-1' } });
    expect(backend.calls.map((c) => c.purpose)).toEqual(['plan', 'verify', 'verify']);
  });

  it('uses a replaced synthesizer and repairer', async () => {
    const synthesizer: SynthesizerLike = {
      async synthesize(input) {
        const deliverable = { answer: input.subtasks.map((s) => s.answer).join(' + '), files: [] };
        return { status: 'completed', deliverable, executor: executorResult({ answer: deliverable.answer }) };
      },
    };
    const repairs: string[] = [];
    const repairer: RepairerLike = {
      async repair(input) {
        repairs.push(input.defects.map((d) => d.description).join());
        const deliverable = { answer: `${input.deliverable.answer} (fixed)`, files: [] };
        return { status: 'completed', deliverable, executor: executorResult({ answer: deliverable.answer }) };
      },
    };
    const backend = new ScriptedBackend({
      plan: [planOf('a', 'b')],
      execute: [submit('A'), submit('B')],
      verify: [verdict(false, ['needs a fix']), verdict(true)],
    });
    const result = await createHarness({
      backend,
      components: { synthesizer, repairer },
      workspace: await tempDir(),
    }).run(TASK);
    expect(repairs).toEqual(['needs a fix']);
    expect(result.deliverable.answer).toBe('A + B (fixed)');
    expect(backend.callsFor('synthesize')).toHaveLength(0);
    expect(backend.callsFor('repair')).toHaveLength(0);
    backend.assertComplete();
  });

  it('fits every request through a replaced memory and counts its compressions and prunes', async () => {
    const fitted: Purpose[] = [];
    const inner = new PassThroughMemory();
    const memory: ExecutionMemory = {
      boundObservation: (invocation) => inner.boundObservation(invocation),
      fitRequest: (request: PendingRequest, scope) => {
        fitted.push(scope.purpose);
        if (scope.purpose === 'execute') {
          const sizes = { tokensBefore: 900, tokensAfter: 300 };
          scope.emit({
            type: 'memory-compress',
            runId: scope.runId,
            purpose: scope.purpose,
            ...sizes,
            roundsSummarized: 2,
          });
          scope.emit({
            type: 'memory-prune',
            runId: scope.runId,
            purpose: scope.purpose,
            ...sizes,
            messagesRemoved: 1,
            reason: 'emergency-threshold',
          });
        }
        return inner.fitRequest(request);
      },
      pruneAfterOverflow: (request) => inner.pruneAfterOverflow(request),
      countRequest: (messages, tools) => inner.countRequest(messages, tools),
    };
    const backend = new ScriptedBackend({ plan: [planOf('a')], execute: [submit('a')], verify: [verdict(true)] });
    const result = await createHarness({ backend, components: { memory }, workspace: await tempDir() }).run(TASK);
    expect(fitted).toEqual(['plan', 'execute', 'verify']);
    expect(result.report).toMatchObject({ compressions: 1, prunes: 1 });
  });
});

describe('harness.run: input', () => {
  it('rejects malformed attachments and signals with messages saying what to pass', async () => {
    const harness = createHarness({ backend: new ScriptedBackend([]), workspace: await tempDir() });
    await expect(harness.run({ task: TASK, attachments: 'brief.pdf' as never })).rejects.toMatchObject({
      code: 'invalid-input',
      message: expect.stringContaining('array of non-empty file paths'),
    });
    await expect(harness.run({ task: TASK, signal: {} as never })).rejects.toMatchObject({
      code: 'invalid-input',
      message: expect.stringContaining('AbortSignal'),
    });
  });
});
