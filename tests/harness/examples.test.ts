import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { rubricScore, scoreWithJudge } from '../../examples/support/rubric.js';
import { ABLATION_TASKS } from '../../examples/support/ablation-tasks.js';
import type { RunResult } from 'horizon-harness';
import { ScriptedBackend, reply } from 'horizon-harness/testing';
import { tempDir } from './helpers.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const tsx = path.join(root, 'node_modules/.bin/tsx');

const scripts = (
  JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;

/** The example file an npm script runs (`tsx examples/x.ts`). */
function exampleOf(script: string): string {
  const file = /^tsx (examples\/[\w-]+\.ts)$/.exec(scripts[script] ?? '')?.[1];
  if (!file) throw new Error(`package.json has no script "${script}" running an example with tsx`);
  return file;
}

/**
 * Runs an example's npm script the way a new user does: no API keys or other variables, only PATH and HOME; temp
 * files go to `tmp`. tsx is called directly (npm would add its own variables).
 */
async function runExample(script: string, tmp: string): Promise<string> {
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmp, TMPDIR: tmp };
  const { stdout } = await run(tsx, [exampleOf(script)], {
    cwd: root,
    env,
    timeout: 120_000,
    maxBuffer: 8 * 1024 * 1024,
  });
  return stdout;
}

/** Every example file and its support files, relative to the repository. */
async function exampleFiles(): Promise<string[]> {
  const entries = await readdir(path.join(root, 'examples'), { recursive: true });
  return entries.filter((file) => file.endsWith('.ts')).map((file) => path.join('examples', file));
}

describe('examples are what a user can copy', () => {
  it('each example has an npm script (example:<name>; the quickstart is also npm run demo)', async () => {
    const examples = (await exampleFiles()).filter((file) => !file.includes('/support/'));
    expect(examples.length).toBeGreaterThanOrEqual(4);
    for (const file of examples) expect(exampleOf(`example:${path.basename(file, '.ts')}`)).toBe(file);
    expect(exampleOf('demo')).toBe('examples/quickstart.ts');
  });

  it('examples import the library by its package name, never from the source tree', async () => {
    for (const file of await exampleFiles()) {
      const source = await readFile(path.join(root, file), 'utf8');
      const specifiers = [...source.matchAll(/from '([^']+)'/g)].map((m) => m[1]!);
      expect(
        specifiers.filter((s) => s.includes('src/')),
        file,
      ).toEqual([]);
      if (!file.includes('/support/')) expect(specifiers, file).toContain('horizon-harness');
    }
  });
});

// Each example is a child process doing whole runs; on a loaded machine that takes longer than the default 30 s.
describe('examples with no environment variables', { timeout: 150_000 }, () => {
  it('npm run example:custom-tool runs a defineTool tool in the Executor and shows the file it wrote', async () => {
    const out = await runExample('example:custom-tool', await tempDir());
    expect(out).toContain('[tool] save_note → ok');
    expect(out).toMatch(/^completed — I wrote the haiku/m);
    expect(out).toContain("files: [ 'notes/river-haiku.md' ]");
    expect(out).toContain('# River haiku');
  });

  it('npm run example:managed runs managed mode offline: audits with evidence, a caught false claim, the final state', async () => {
    const out = await runExample('example:managed', await tempDir());
    expect(out).toContain('manager → execute');
    expect(out).toContain('⚠ caught');
    expect(out).toContain('■ succeeded');
    expect(out).toMatch(/\[completed\] \w+/);
    expect(out).toContain('"tokensByRole"');
  });

  it('npm run demo (example:quickstart) replays offline, says so first, and delivers itinerary.md', async () => {
    const tmp = await tempDir();
    const out = await runExample('demo', tmp);
    const lines = out.split('\n');
    expect(lines[0]).toMatch(/replay backend/);
    expect(out).toMatch(/plan \(\d+ subtasks\)/);
    expect(out).toContain('🔧 write_to_file');
    expect(out).toContain('verification 1: failed');
    expect(out).toContain('repair 1');
    expect(out).toContain('■ succeeded');
    const deliverable = /^Deliverable: (.+)$/m.exec(out)?.[1];
    expect(deliverable).toBeDefined();
    expect(deliverable!.startsWith(tmp)).toBe(true);
    const body = await readFile(deliverable!, 'utf8');
    for (const heading of ['Day by day', 'Budget', 'Packing list']) expect(body).toContain(`## ${heading}`);
    const report = JSON.parse(out.slice(out.indexOf('Report:') + 'Report:'.length)) as RunResult['report'];
    expect(report).toMatchObject({ repairs: 1, repairRecovered: true, firstPassVerified: false });
  });

  it('npm run example:ablation replays offline, says so first, and prints a row per configuration', async () => {
    const tmp = await tempDir();
    const out = await runExample('example:ablation', tmp);
    expect(out.split('\n')[0]).toMatch(/replay backend/);
    expect(out).toMatch(/Config\s+Score\s+Latency s\s+Model calls\s+Tool calls\s+Tokens/);
    const rows = new Map(
      [...out.matchAll(/^(DIRECT|DECOMP|VERIFY|FULL)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)$/gm)].map(
        (m) => [m[1], { score: Number(m[2]), calls: Number(m[4]) }],
      ),
    );
    expect([...rows.keys()]).toEqual(['DIRECT', 'DECOMP', 'VERIFY', 'FULL']);
    // The replayed agent forgets a section that only verification reliably restores.
    expect(rows.get('FULL')!.score).toBe(1);
    expect(rows.get('DIRECT')!.score).toBeLessThan(1);
    expect(rows.get('DIRECT')!.calls).toBeLessThan(rows.get('FULL')!.calls);
    const workspaces = /^Workspaces: (.+)$/m.exec(out)?.[1];
    expect(workspaces?.startsWith(tmp)).toBe(true);
    expect(await readdir(workspaces!)).toHaveLength(4 * ABLATION_TASKS.length);
  });
});

describe('ablation rubric scoring', () => {
  const criteria = [
    { content: 'has A', score: 2 },
    { content: 'has B', score: 1 },
    { content: 'has C', score: 1 },
    { content: 'no file delivered', score: -2 },
  ];

  it('is satisfied positive points minus triggered penalties, floored at 0, over the positive total', () => {
    expect(rubricScore(criteria, new Set(['1', '2', '3']))).toBe(1);
    expect(rubricScore(criteria, new Set(['1', '2']))).toBe(0.75);
    expect(rubricScore(criteria, new Set(['1', '2', '4']))).toBe(0.25);
    expect(rubricScore(criteria, new Set(['3', '4']))).toBe(0);
    expect(rubricScore([{ content: 'only a penalty', score: -1 }], new Set())).toBe(0);
  });

  it('asks the judge per criterion and scores its reply; an unusable reply scores 0 and says why', async () => {
    const task = { ...ABLATION_TASKS[0]!, score_criteria: criteria };
    const result = {
      deliverable: { answer: 'ANSWER-TEXT', files: [] },
      workspace: await tempDir(),
    } as unknown as RunResult;
    const judge = new ScriptedBackend([
      reply(
        '{"criteria_results":[{"criterion_id":"1","satisfied":true},{"criterion_id":2,"satisfied":false},{"criterion_id":"4","satisfied":true}]}',
      ),
      reply('no verdict'),
    ]);
    expect(await scoreWithJudge(judge, task, result)).toEqual({ score: 0 });
    const prompt = String(judge.calls[0]?.messages[0]?.content);
    expect(prompt).toContain('ANSWER-TEXT');
    expect(prompt).toContain('(no files delivered)');
    expect(prompt).toContain('Criterion 4 (ID: 4, Score: -2): no file delivered');
    const unusable = await scoreWithJudge(judge, task, result);
    expect(unusable.score).toBe(0);
    expect(unusable.error).toMatch(/no parseable JSON/);
  });
});
