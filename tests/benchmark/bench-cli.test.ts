import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AgentIfResults, PairRecord } from '../../src/benchmark/index.js';
import { main, type CliIo } from '../../src/cli/main.js';
import { state } from './fixtures/scripted-backends.js';
import { writeSyntheticSet } from './fixtures/synthetic-set.js';

const BACKENDS = fileURLToPath(new URL('./fixtures/scripted-backends.ts', import.meta.url));
const dirs: string[] = [];

beforeEach(() => state.reset());
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function setUp() {
  const dir = await mkdtemp(path.join(tmpdir(), 'agentif-bench-'));
  dirs.push(dir);
  const set = await writeSyntheticSet(dir);
  const out = path.join(dir, 'out');
  const argv = ['bench', 'agentif', '--data', set.data, '--attachments', set.attachments, '--out', out];
  return { dir, out, argv: [...argv, '--backend-module', BACKENDS] };
}

async function cli(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
  };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

async function pairFile(out: string, config: string, taskId: string): Promise<PairRecord> {
  return JSON.parse(await readFile(path.join(out, 'tasks', config, `${taskId}.json`), 'utf8')) as PairRecord;
}

/*
 * Task scores by hand, from VERDICTS (max(0, Σ satisfied scores) / Σ positive scores):
 *   101 (+2 +1 −1): DIRECT, DECOMP 2/3; VERIFY, FULL 3/3
 *   102 (+1 +1 −2): DIRECT max(0, 1+1−2)/2 = 0; DECOMP max(0, 1−2)/2 = 0; VERIFY, FULL 2/2
 *   103 (+3 +1): 3/4 everywhere
 *   104 (+1 ×4): DIRECT 1/4, DECOMP 2/4, VERIFY 3/4, FULL 4/4
 *   105 (+2 +2): DIRECT 2/4 (criterion 2 unjudged after a malformed reply and a re-ask), others 4/4
 *   106 (+2 +1 −1): no file delivered, so "Delivers checklist.md" is unsatisfied whatever the judge says: 1/3
 * Means: DIRECT 2.5/6 = 0.417, DECOMP 3.25/6 = 0.542, VERIFY 4.8333/6 = 0.806, FULL 5.0833/6 = 0.847.
 */
describe('horizon-harness bench agentif, one full run', () => {
  // One run of all 24 pairs, shared by the tests that only read what it produced.
  let run: { out: string; code: number; stdout: string; stderr: string; prompts: Map<string, string> };
  let shared: string[] = [];
  beforeAll(async () => {
    state.reset();
    const { out, argv } = await setUp();
    shared = dirs.splice(0); // kept until every test of this block has read it
    const result = await cli(argv);
    run = { out, ...result, prompts: new Map(state.judgePrompts) };
  }, 120_000);
  afterAll(async () => {
    for (const dir of shared) await rm(dir, { recursive: true, force: true });
  });

  it('runs 6 tasks × 4 configurations on scripted backends and prints the scores computed by hand', async () => {
    const { out, code, stdout, stderr } = run;
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/\| DIRECT \| 6 \| 0\.417 \|/);
    expect(stdout).toMatch(/\| DECOMP \| 6 \| 0\.542 \|/);
    expect(stdout).toMatch(/\| VERIFY \| 6 \| 0\.806 \|/);
    expect(stdout).toMatch(/\| FULL \| 6 \| 0\.847 \|/);

    const results = JSON.parse(await readFile(path.join(out, 'results.json'), 'utf8')) as AgentIfResults;
    expect(results.finished).toBe(true);
    const byConfig = Object.fromEntries(results.summary.map((s) => [s.config, s]));
    expect(byConfig.DIRECT?.score).toBeCloseTo(2.5 / 6, 10);
    expect(byConfig.FULL?.score).toBeCloseTo((1 + 1 + 3 / 4 + 1 + 1 + 1 / 3) / 6, 10);
    // Perfect tasks and "better than FULL" (101, 102, 104, 105 are perfect under FULL; nothing beats FULL).
    expect(byConfig.FULL).toMatchObject({ perfect: 4, betterThanFull: null, unjudgedCriteria: 0 });
    expect(byConfig.DIRECT).toMatchObject({ perfect: 0, betterThanFull: 0, unjudgedCriteria: 1 });
    // Verification ran (and passed first time) only where it was on.
    expect(byConfig.VERIFY).toMatchObject({ verified: 6, firstPassVerified: 6, repaired: 0 });
    expect(byConfig.DECOMP).toMatchObject({ verified: 0, firstPassVerified: 0 });
    // Slices: task type, domain, and with / without attachments (only 106 has none: 1/3 everywhere).
    expect(byConfig.VERIFY?.slices.attachments.without).toBeCloseTo(1 / 3, 10);
    expect(byConfig.VERIFY?.slices.taskType.OWE).toBeCloseTo((1 + 0.75) / 2, 10);
    expect(byConfig.DIRECT?.slices.domain.life).toBeCloseTo((0 + 0.5) / 2, 10);
    const table = await readFile(path.join(out, 'table.md'), 'utf8');
    expect(table).toContain('| Config | w/o attachments | w/ attachments | IR | LII | OWE | life | study | work |');
    expect(stdout).toContain(table);
  });

  it('records every criterion: the file rule overrides the judge, an unjudged criterion says so', async () => {
    const { out } = run;
    const noFile = await pairFile(out, 'FULL', 'taskif_106');
    expect(noFile.run.files).toEqual([]);
    expect(noFile.judgement?.criteria.map((c) => [c.satisfied, c.source])).toEqual([
      [false, 'no-file-delivered'],
      [true, 'judge'],
      [false, 'judge'],
    ]);
    expect(noFile.score).toEqual({ score: 1 / 3, gained: 1, possible: 3 });

    const reAsked = await pairFile(out, 'DIRECT', 'taskif_105');
    expect(reAsked.judgement?.calls).toBe(2);
    expect(reAsked.judgement?.criteria[1]).toMatchObject({ satisfied: null, source: 'unjudged' });
    expect(reAsked.judgement?.problem).toMatch(/1 criteria unjudged/);
    expect(reAsked.score?.score).toBe(0.5);
  });

  it('gives the judge the question, the parsed attachments, the answer and its files, the reference and the criteria', async () => {
    const { out } = run;
    const prompt = (key: string) => run.prompts.get(key) ?? '';
    expect(prompt('taskif_101/FULL')).toContain('| March | 350 |'); // CSV rows
    expect(prompt('taskif_102/FULL')).toMatch(/Hotel.*240/); // XLSX cells
    expect(prompt('taskif_103/FULL')).toContain('Section three: diagonalisation'); // DOCX text
    expect(prompt('taskif_104/FULL')).toContain('Attention is all you need'); // PDF text
    expect(prompt('taskif_105/FULL')).toMatch(/photo\.png.*40 ?[×x] ?30/); // image, under its original name
    expect(prompt('taskif_101/FULL')).toContain('Written by FULL.'); // the delivered file's content
    expect(prompt('taskif_101/FULL')).toContain('Total 600; best month March.');
    expect(prompt('taskif_106/FULL')).toContain('Cancel internet'); // the reference file
    expect(prompt('taskif_106/FULL')).toContain('(no files delivered)');
    expect(prompt('taskif_101/FULL')).toContain('Criterion 3 (ID: 3, Score: -1): report.md invents numbers');
    expect(prompt('taskif_101/FULL')).toContain('Criterion 1 (ID: 1, Score: +2)');
    // Each run has its own workspace holding the attachment under its original name.
    const copied = path.join(out, 'workspaces', 'DECOMP', 'taskif_105', 'attachments', 'photo.png');
    expect((await stat(copied)).isFile()).toBe(true);
  });
});

describe('horizon-harness bench agentif', () => {
  it('resumes: finished pairs are skipped, a lost pair is run again, an unjudged run is only judged', async () => {
    const { out, argv } = await setUp();
    state.failJudgingOf = 'taskif_103/VERIFY';
    const first = await cli(argv);
    expect(first.code).toBe(1);
    expect(first.stdout).toContain('VERIFY taskif_103 · ✗ server-error');
    expect(first.stderr).toContain('1 pair(s) failed');
    const calls = state.agentCalls;

    // Everything finished: nothing is called again.
    state.reset();
    await rm(path.join(out, 'tasks', 'DIRECT', 'taskif_104.json')); // a pair lost in a crash
    const second = await cli(argv);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('resuming: 22 of 24 pairs already finished');
    expect(second.stdout).toContain('VERIFY taskif_103 · score 0.750 · succeeded · 0.0 min · judged again');
    // The lost pair's agent calls only (DIRECT: one write, one submit); two judge calls (the lost pair and 103/VERIFY).
    expect(state.agentCalls).toBe(2);
    expect(state.judgeCalls).toBe(2);
    expect(calls).toBeGreaterThan(state.agentCalls);
    expect(second.stdout).toMatch(/\| DIRECT \| 6 \| 0\.417 \|/);

    state.reset();
    const third = await cli(argv);
    expect(third.code).toBe(0);
    expect(state.agentCalls + state.judgeCalls).toBe(0);
    expect(third.stdout).toMatch(/\| VERIFY \| 6 \| 0\.806 \|/);
  });

  it('runs pairs in parallel up to --concurrency and no further', async () => {
    const { argv } = await setUp();
    state.holdUntilActive = 2; // the first pair waits for a second one: parallelism must happen
    const { code } = await cli([...argv, '--configs', 'FULL', '--concurrency', '2']);
    expect(code).toBe(0);
    expect(state.maxActive).toBe(2);
  });

  it('--tasks and --configs select pairs; --json prints results.json on stdout', async () => {
    const { argv } = await setUp();
    const { code, stdout, stderr } = await cli([
      ...argv,
      '--tasks',
      'taskif_104',
      '--configs',
      'direct,full',
      '--json',
    ]);
    expect(code).toBe(0);
    expect(stderr).toContain('AgentIF-OneDay · 1 tasks × DIRECT, FULL');
    const results = JSON.parse(stdout) as AgentIfResults;
    expect(results.summary.map((s) => [s.config, s.score])).toEqual([
      ['DIRECT', 0.25],
      ['FULL', 1],
    ]);
    expect(results.summary[0]?.betterThanFull).toBe(0);
  });

  it('refuses bad input before any model call: naming the line and field, an unknown task, a missing file', async () => {
    const { dir, argv } = await setUp();
    const data = path.join(dir, 'bad.jsonl');
    await writeFile(data, '{"question_id":"taskif_1","title":"t","description":"d","score_criteria":[]}\n');
    const bad = await cli([...argv, '--data', data]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('bad.jsonl line 1, field "score_criteria": must list at least one criterion');

    const unknown = await cli([...argv, '--tasks', 'taskif_999']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown task id(s) taskif_999');

    await rm(path.join(dir, 'Attachments', 'Questions', 'taskif_101_attachment_sales.csv'));
    const missing = await cli(argv);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/Task taskif_101 \(line 1\), attachment_filenames: "sales.csv" was not found/);
    expect(state.agentCalls + state.judgeCalls).toBe(0);
  });
});
