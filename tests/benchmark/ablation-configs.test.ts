/**
 * The four ablation configurations of the paper's Table 3, run through the benchmark runner on one scripted task set,
 * differ only in their two switches: every loop has the same iteration bound, subtasks run in the same (sequential)
 * order, and every request is the same apart from the decomposition wording.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GenerateRequest, GenerateResult, Message, Purpose } from '../../src/backend/types.js';
import {
  AgentIfTaskSchema,
  runAgentIfBenchmark,
  type AblationConfigName,
  type AgentIfResults,
  type BenchmarkPair,
  type LoadedAgentIfTask,
} from '../../src/benchmark/index.js';
import { ScriptedBackend, reply, submit, toolCall, verdict } from '../../src/testing/index.js';
import { writeToFileTool } from '../../src/tools/builtin/write-to-file.js';

const CONFIGS: AblationConfigName[] = ['DIRECT', 'DECOMP', 'VERIFY', 'FULL'];
/** The loop bound every configuration gets, small so that a runaway loop ends soon. */
const MAX_ITERATIONS = 5;

const REPORT = 'Sales report: the total is 600 and March is the best month.';

const RECORDS = [
  {
    question_id: 'taskif_report',
    title: 'Sales report',
    description: 'Read sales.csv and write report.md with the yearly total and the best month.',
    attachment_filenames: ['sales.csv'],
    score_criteria: [{ content: 'report.md states the total (600)', score: 1 }],
  },
  {
    question_id: 'taskif_runaway',
    title: 'Endless research',
    description: 'Research every owl species and write owls.md.',
    score_criteria: [{ content: 'owls.md lists species', score: 1 }],
  },
];

/** Every request of every pair, by `taskId/config`. */
const requests = new Map<string, GenerateRequest[]>();

/**
 * The agent, the same for every configuration: it never sees which one it runs in. The report task is planned as
 * two subtasks (the second marked independent, wrongly: it needs the first's figures); the runaway task's execute
 * loops never submit.
 */
function agent(pair: BenchmarkPair) {
  const key = `${pair.task.question_id}/${pair.config.name}`;
  const calls: GenerateRequest[] = [];
  requests.set(key, calls);
  const runaway = pair.task.question_id === 'taskif_runaway';
  return new ScriptedBackend((request): GenerateResult => {
    calls.push(request);
    const task = userText(request);
    const wrote = request.messages.some((m) => m.role === 'tool');
    switch (request.purpose) {
      case 'plan':
        return reply(
          JSON.stringify({
            subtasks: runaway
              ? [{ title: 'Research', objective: 'Research the species.', expectedOutput: 'species list' }]
              : [
                  { title: 'Figures', objective: 'Sum sales.csv and find the best month.', expectedOutput: 'figures' },
                  { title: 'Write', objective: 'Write report.md.', expectedOutput: 'report.md', dependsOn: [] },
                ],
          }),
        );
      case 'verify':
        return verdict(true);
      case 'summarize':
        return reply('Summary.');
      case 'execute':
        if (runaway) return toolCall('write_to_file', { path: 'notes.md', content: 'more owls' });
        if (task.includes('Subtask 1 of 2')) return submit('Total 600; best month March.');
        break;
      default:
        break;
    }
    // The loop that writes the deliverable: the direct loop, the second subtask, synthesis.
    return wrote ? submit(REPORT, ['report.md']) : toolCall('write_to_file', { path: 'report.md', content: REPORT });
  });
}

/** A judge that finds every criterion satisfied. */
const judge = new ScriptedBackend((request) => {
  const criteria = [...userText(request).matchAll(/Criterion \d+ \(ID: (\d+)/g)].map((m) => m[1]);
  return reply(
    JSON.stringify({
      criteria_results: criteria.map((id) => ({ criterion_id: id, satisfied: true, reasoning: 'scripted' })),
    }),
  );
});

function text(message: Message | undefined): string {
  if (!message) return '';
  const { content } = message;
  return typeof content === 'string' ? content : content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

function userText(request: GenerateRequest): string {
  return text(request.messages.find((m) => m.role === 'user'));
}

/** A request as plain text, with the run's random data mark made the same for every run. */
function normalised(request: GenerateRequest): { purpose: Purpose | undefined; messages: string[] } {
  return {
    purpose: request.purpose,
    messages: request.messages.map((m) => `${m.role}: ${text(m).replace(/data-[0-9a-f]{16}/g, 'data-MARK')}`),
  };
}

function of(taskId: string, config: AblationConfigName, purpose?: Purpose) {
  const calls = requests.get(`${taskId}/${config}`) ?? [];
  return (purpose ? calls.filter((c) => c.purpose === purpose) : calls).map(normalised);
}

/** The system prompts of a configuration's requests, per purpose. */
function systemPrompts(taskId: string, config: AblationConfigName): Record<string, string[]> {
  const prompts: Record<string, Set<string>> = {};
  for (const request of of(taskId, config)) {
    const system = request.messages.find((m) => m.startsWith('system: '));
    if (system) (prompts[request.purpose ?? '?'] ??= new Set()).add(system);
  }
  return Object.fromEntries(Object.entries(prompts).map(([purpose, set]) => [purpose, [...set]]));
}

/** The number of model calls of each execute loop, in order (a loop's first request has no assistant turn yet). */
function executeLoops(taskId: string, config: AblationConfigName): number[] {
  const loops: number[] = [];
  for (const request of requests.get(`${taskId}/${config}`) ?? []) {
    if (request.purpose !== 'execute') continue;
    if (!request.messages.some((m) => m.role === 'assistant')) loops.push(0);
    loops[loops.length - 1] = (loops.at(-1) ?? 0) + 1;
  }
  return loops;
}

describe('the ablation configurations through the benchmark runner', () => {
  let dir: string;
  let results: AgentIfResults;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ablation-configs-'));
    const csv = path.join(dir, 'sales.csv');
    await writeFile(csv, 'month,amount\nJanuary,100\nFebruary,150\nMarch,350\n');
    const tasks: LoadedAgentIfTask[] = RECORDS.map((record, index) => ({
      task: AgentIfTaskSchema.parse(record),
      line: index + 1,
      attachments: record.attachment_filenames ? [{ path: csv, name: 'sales.csv' }] : [],
      referenceFiles: [],
    }));
    results = await runAgentIfBenchmark({
      tasks,
      out: path.join(dir, 'out'),
      agent,
      judge,
      tools: () => [writeToFileTool()],
      harness: { limits: { maxIterations: MAX_ITERATIONS } },
    });
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('runs every pair', () => {
    expect(results.errors).toEqual([]);
    expect(results.pairs).toHaveLength(CONFIGS.length * RECORDS.length);
  });

  it('gives every configuration the same system prompt per role', () => {
    const all = CONFIGS.map((config) => systemPrompts('taskif_report', config));
    const execute = new Set(all.map((prompts) => JSON.stringify(prompts.execute)));
    expect(execute.size).toBe(1);
    const [, decomp, verify, full] = all;
    for (const purpose of ['plan', 'synthesize'] as const) expect(decomp?.[purpose]).toEqual(full?.[purpose]);
    expect(verify?.verify).toEqual(full?.verify);
  });

  it('sends the same requests where a switch does not apply: DIRECT as VERIFY, DECOMP as FULL, up to verification', () => {
    const report = 'taskif_report';
    expect(of(report, 'DIRECT')).toEqual(of(report, 'VERIFY').filter((r) => r.purpose !== 'verify'));
    expect(of(report, 'DECOMP')).toEqual(of(report, 'FULL').filter((r) => r.purpose !== 'verify'));
    expect(of('taskif_runaway', 'DIRECT')).toEqual(
      of('taskif_runaway', 'VERIFY').filter((r) => r.purpose !== 'verify'),
    );
    expect(of('taskif_runaway', 'DECOMP')).toEqual(of('taskif_runaway', 'FULL').filter((r) => r.purpose !== 'verify'));
  });

  it('verifies VERIFY and FULL with the same request but for the subtask answers decomposition adds', () => {
    const [verifyRun] = of('taskif_report', 'VERIFY', 'verify');
    const [fullRun] = of('taskif_report', 'FULL', 'verify');
    const withoutSubtasks = (messages: string[]) =>
      messages.map((m) => m.replace(/\n\n## Subtask answers the deliverable was built from[\s\S]*?(?=\n\nJudge )/, ''));
    expect(fullRun?.messages[1]).toContain('## Subtask answers the deliverable was built from');
    expect(verifyRun?.messages[1]).not.toContain('Subtask');
    expect(withoutSubtasks(fullRun?.messages ?? [])).toEqual(verifyRun?.messages);
  });

  it('differs between DIRECT and DECOMP only in the objective decomposition gives a loop', () => {
    const direct = of('taskif_report', 'DIRECT', 'execute')[0]?.messages ?? [];
    const decomp = of('taskif_report', 'DECOMP', 'execute')[0]?.messages ?? [];
    expect(direct[0]).toBe(decomp[0]);
    const sections = (message = '') => message.split(/\n\n(?=## )/);
    const [directRequest, directObjective, ...directRest] = sections(direct[1]);
    const [decompRequest, decompObjective, ...decompRest] = sections(decomp[1]);
    expect(directRequest).toBe(decompRequest);
    expect(directRest).toEqual(decompRest);
    expect(decompObjective).toContain('Subtask 1 of 2');
    expect(directObjective).toMatch(/^## Your objective now\nCarry out the original request completely/);
    expect(directObjective).not.toMatch(/\bplan\b|subtask|other loops/i);
  });

  it('bounds every execute loop of every configuration by the same limits.maxIterations', () => {
    const loops = Object.fromEntries(CONFIGS.map((config) => [config, executeLoops('taskif_runaway', config)]));
    // DIRECT and VERIFY: one loop, not retried; DECOMP and FULL: the subtask's three attempts (retries come with
    // decomposition, as in the paper's Table 6). Every loop gets the whole bound.
    expect(loops).toEqual({
      DIRECT: [MAX_ITERATIONS],
      DECOMP: [MAX_ITERATIONS, MAX_ITERATIONS, MAX_ITERATIONS],
      VERIFY: [MAX_ITERATIONS],
      FULL: [MAX_ITERATIONS, MAX_ITERATIONS, MAX_ITERATIONS],
    });
    expect(executeLoops('taskif_report', 'DECOMP')).toEqual([1, 2]);
  });

  it('runs subtasks in the paper’s order in both decomposed configurations, each seeing the earlier results', () => {
    for (const config of ['DECOMP', 'FULL'] as const) {
      const second = of('taskif_report', config, 'execute').find((r) => r.messages[1]?.includes('Subtask 2 of 2'));
      // The planner marked it independent; run in order, it still has the figures it needs.
      expect(second?.messages[1]).toContain('Total 600; best month March.');
      expect(second?.messages[1]).not.toContain('Running at the same time');
    }
  });
});
