import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ABLATION_TASKS } from '../../examples/support/ablation-tasks.js';
import type { RunResult } from 'horizon-harness';
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
      if (!file.includes('/support/'))
        expect(specifiers.filter((s) => /^horizon-harness(\/|$)/.test(s)).length, file).toBeGreaterThan(0);
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
    expect(out).toContain('final verification 1: passed');
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
    expect(out).toMatch(
      /\| Config \| Tasks \| Score \| Perfect \| Better than FULL \| Min\/task \| Score\/min \| Model calls \|/,
    );
    const rows = new Map(
      [...out.matchAll(/^\| (DIRECT|DECOMP|VERIFY|FULL) \| (\d+) \| ([\d.]+) \|(?: [^|]+ \|){4} ([\d.]+) \|/gm)].map(
        (m) => [m[1], { tasks: Number(m[2]), score: Number(m[3]), calls: Number(m[4]) }],
      ),
    );
    expect([...rows.keys()]).toEqual(['DIRECT', 'DECOMP', 'VERIFY', 'FULL']);
    expect(rows.get('FULL')!.tasks).toBe(ABLATION_TASKS.length);
    // The replayed agent forgets a section that only verification reliably restores.
    expect(rows.get('FULL')!.score).toBe(1);
    expect(rows.get('DIRECT')!.score).toBeLessThan(1);
    expect(rows.get('DIRECT')!.calls).toBeLessThan(rows.get('FULL')!.calls);
    const results = /^Results: (.+)$/m.exec(out)?.[1];
    expect(results?.startsWith(tmp)).toBe(true);
    for (const config of ['DIRECT', 'DECOMP', 'VERIFY', 'FULL'])
      expect(await readdir(path.join(results!, 'workspaces', config))).toHaveLength(ABLATION_TASKS.length);
  });
});
