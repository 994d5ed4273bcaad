import { mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HarnessError } from '../../src/errors.js';
import { editFileTool } from '../../src/tools/builtin/edit-file.js';
import { writeToFileTool } from '../../src/tools/builtin/write-to-file.js';
import { LocalWorkspace } from '../../src/workspace/index.js';
import { SealableWorkspace } from '../../src/workspace/sealable-workspace.js';
import { ToolWorkspace } from '../../src/workspace/tool-workspace.js';
import type { Workspace } from '../../src/workspace/types.js';
import { race, RACE_TARGETS } from './support/race.js';
import { invoke, toolContext } from './support/tool-context.js';

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

      const { attempts, swaps, landed } = await race(
        harnessDir,
        [path.join(workspace.root, 'd')],
        [
          () => invoke(write, { path: 'd/x', content: 'forged' }, context),
          () => invoke(write, { path: 'd/run.lock', content: '{"pid":1}' }, context),
          () => invoke(write, { path: 'd/run.json', content: '{"forged":true}' }, context),
          () => invoke(edit, { path: 'd/run.json', search: 'harness', replace: 'forger' }, context),
          (n) => view.writeFile(`d/sub-${n % 5}/y`, 'forged', origin),
          () => view.appendFile('d/outputs-log.txt', 'forged\n', origin),
          () => view.copyIn(source, 'd/copied.bin', origin),
        ],
      );

      expect((await readdir(harnessDir, { recursive: true })).sort()).toEqual(['outputs', 'run.json']);
      expect(await readFile(path.join(harnessDir, 'run.json'), 'utf8')).toBe('{"the":"harness\'s own"}');
      // The race was real: thousands of writes against thousands of swaps, and writes did land in `d`.
      expect(attempts).toBeGreaterThanOrEqual(RACE_TARGETS.attempts);
      expect(swaps).toBeGreaterThanOrEqual(RACE_TARGETS.swaps);
      expect(landed).toBeGreaterThanOrEqual(RACE_TARGETS.landed);
    },
    // The race runs to counts; this is only the bound on a hang.
    300_000,
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
