import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HarnessError } from '../../src/errors.js';
import { editFileTool } from '../../src/tools/builtin/edit-file.js';
import { writeToFileTool } from '../../src/tools/builtin/write-to-file.js';
import { LocalWorkspace } from '../../src/workspace/index.js';
import { SealableWorkspace } from '../../src/workspace/sealable-workspace.js';
import { ToolWorkspace } from '../../src/workspace/tool-workspace.js';
import type { Workspace } from '../../src/workspace/types.js';
import { invoke, toolContext } from './support/tool-context.js';

const SWAPPER = fileURLToPath(new URL('./support/swap-directory.py', import.meta.url));
/** How long the swapper races the writes: long enough for thousands of writes on a loaded machine. */
const RACE_SECONDS = 12;

let base: string;
let workspace: LocalWorkspace;
let harnessDir: string;

beforeEach(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'ws-guard-race-'));
  workspace = await LocalWorkspace.create({ dir: path.join(base, 'ws') });
  harnessDir = path.join(workspace.root, '.harness');
  await mkdir(path.join(harnessDir, 'outputs'), { recursive: true });
  await writeFile(path.join(harnessDir, 'run.json'), '{"the":"harness\'s own"}');
});

afterEach(async () => {
  await workspace.dispose();
  await rm(base, { recursive: true, force: true });
});

/** Starts swapping `d` between a real directory and a link to `.harness`; resolves with the swaps done at the end. */
async function startSwapper(): Promise<{ done: Promise<number> }> {
  const child = spawn('python3', [SWAPPER, harnessDir, String(RACE_SECONDS), path.join(workspace.root, 'd')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  const ready = new Promise<void>((resolve) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      if (line === 'ready') resolve();
    });
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await Promise.race([ready, exited]);
  expect(lines[0]).toBe('ready');
  return { done: exited.then(() => Number(/^swaps (\d+)$/.exec(lines.at(-1) ?? '')?.[1] ?? 0)) };
}

describe("a tool's writes while a directory is swapped for a link to .harness/ (issue 22)", () => {
  it.runIf(process.platform === 'linux')(
    'land nothing under .harness/: write_to_file, edit_file, writes, appends and copies through the tool view',
    async () => {
      await mkdir(path.join(workspace.root, 'd'));
      const source = path.join(base, 'attachment.bin');
      await writeFile(source, 'attachment bytes');
      // The tool view of a run's workspace, over the run's sealable handle, as the executor builds it.
      const view = new ToolWorkspace(new SealableWorkspace(workspace, 'run-race'));
      const context = toolContext(view);
      const write = writeToFileTool();
      const edit = editFileTool();
      const origin = { tool: 'race' };

      let running = true;
      let attempts = 0;
      let landed = 0;
      const loop = async (operation: (n: number) => Promise<unknown>): Promise<void> => {
        for (let n = 0; running; n += 1) {
          attempts += 1;
          // Refusals are expected while `d` is a link; only where bytes land matters.
          await operation(n).then(
            (result) => {
              if (!(result as { isError?: boolean } | undefined)?.isError) landed += 1;
            },
            () => undefined,
          );
          await new Promise((resolve) => setImmediate(resolve));
        }
      };
      const swapper = await startSwapper();
      const loops = [
        loop(() => invoke(write, { path: 'd/x', content: 'forged' }, context)),
        loop(() => invoke(write, { path: 'd/run.lock', content: '{"pid":1}' }, context)),
        loop(() => invoke(write, { path: 'd/run.json', content: '{"forged":true}' }, context)),
        loop(() => invoke(edit, { path: 'd/run.json', search: 'harness', replace: 'forger' }, context)),
        loop((n) => view.writeFile(`d/sub-${n % 5}/y`, 'forged', origin)),
        loop(() => view.appendFile('d/outputs-log.txt', 'forged\n', origin)),
        loop(() => view.copyIn(source, 'd/copied.bin', origin)),
      ];
      const swaps = await swapper.done;
      running = false;
      await Promise.all(loops);

      expect((await readdir(harnessDir, { recursive: true })).sort()).toEqual(['outputs', 'run.json']);
      expect(await readFile(path.join(harnessDir, 'run.json'), 'utf8')).toBe('{"the":"harness\'s own"}');
      // The race was real: thousands of writes against thousands of swaps, and writes did land in `d`.
      expect(attempts).toBeGreaterThan(2_000);
      expect(swaps).toBeGreaterThan(1_000);
      expect(landed).toBeGreaterThan(100);
    },
    RACE_SECONDS * 1000 + 60_000,
  );
});

describe('a directory swapped for a link to .harness/ right after the path was resolved (issue 22)', () => {
  /** Makes every resolution of a path be followed at once by the swap the racing process times by chance. */
  async function swapAfterEachResolve(target: LocalWorkspace): Promise<void> {
    await mkdir(path.join(target.root, 'd'));
    const resolve = target.resolve.bind(target);
    let parked = 0;
    target.resolve = async (requested, intent) => {
      const resolved = await resolve(requested, intent);
      await rename(path.join(target.root, 'd'), path.join(target.root, `parked-${parked++}`));
      await symlink(harnessDir, path.join(target.root, 'd'));
      return resolved;
    };
  }

  async function expectRefused(operation: Promise<unknown>): Promise<void> {
    const error = await operation.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(HarnessError.isInstance(error), `expected a refusal, got ${String(error)}`).toBe(true);
    expect(error).toMatchObject({ code: 'path-outside-workspace' });
    await rm(path.join(workspace.root, 'd'));
    await mkdir(path.join(workspace.root, 'd'));
  }

  it.runIf(process.platform === 'linux')('writes, appends and copies through the tool view are refused', async () => {
    await swapAfterEachResolve(workspace);
    const view = new ToolWorkspace(new SealableWorkspace(workspace, 'run-swap'));
    const source = path.join(base, 'attachment.bin');
    await writeFile(source, 'attachment');
    await expectRefused(view.writeFile('d/run.lock', '{"pid":1}', { tool: 't' }));
    await expectRefused(view.writeFile('d/sub/deeper.txt', 'x', { tool: 't' }));
    await expectRefused(view.appendFile('d/log.txt', 'x', { tool: 't' }));
    await expectRefused(view.copyIn(source, 'd/run.json'));
    expect((await readdir(harnessDir, { recursive: true })).sort()).toEqual(['outputs', 'run.json']);
    expect(workspace.artifacts()).toEqual([]);
  });

  it('a workspace that does not guard its writes still has the path checked before the write', async () => {
    const writes: string[] = [];
    const custom = {
      root: workspace.root,
      resolve: (requested: string) => Promise.resolve(path.join(workspace.root, requested)),
      writeFile: (requested: string) => {
        writes.push(requested);
        return Promise.resolve({ path: requested, size: 0, sha256: '', tool: 't', updatedAt: 0 });
      },
    } as unknown as Workspace;
    const view = new ToolWorkspace(custom);
    await expect(view.writeFile('.HARNESS/run.json', 'x', { tool: 't' })).rejects.toMatchObject({
      code: 'path-outside-workspace',
    });
    await view.writeFile('notes.md', 'x', { tool: 't' });
    expect(writes).toEqual(['notes.md']);
  });
});
