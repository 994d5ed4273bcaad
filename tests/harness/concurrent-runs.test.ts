import { existsSync } from 'node:fs';
import { readdir, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createHarness } from '../../src/harness/harness.js';
import { submit, toolCall, toolCalls } from '../../src/testing/replies.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { hang, writeFile } from './helpers.js';

const warnings: Error[] = [];
const onWarning = (warning: Error) => warnings.push(warning);
afterEach(() => {
  process.off('warning', onWarning);
  warnings.length = 0;
});

describe('many concurrent runs on one harness', () => {
  it('all finish, and the host sees no "possible memory leak" warning for the harness’s own signals', async () => {
    process.on('warning', onWarning);
    const backend = new ScriptedBackend(async () => {
      // Every run is in flight at once: each waits in its model call until the others have started.
      await new Promise((resolve) => setTimeout(resolve, 20));
      return submit('done');
    });
    const harness = createHarness({ backend, decomposition: false, verification: false, store: false });
    const results = await Promise.all(Array.from({ length: 24 }, (_, i) => harness.run(`task ${i}`)));
    await harness.close();
    // Warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));

    expect(results.map((r) => r.status)).toEqual(Array(24).fill('succeeded'));
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });

  it('a reply with many parallel tool calls raises no such warning either', async () => {
    process.on('warning', onWarning);
    let replies = 0;
    const backend = new ScriptedBackend(() =>
      ++replies === 1
        ? toolCalls(
            Array.from({ length: 16 }, (_, i) => ({ name: 'write_file', args: { path: `f${i}.txt`, content: 'x' } })),
          )
        : submit('done'),
    );
    const harness = createHarness({
      backend,
      tools: [writeFile, hang],
      decomposition: false,
      verification: false,
      store: false,
    });
    const result = await harness.run('write sixteen files');
    await harness.close();
    await new Promise((resolve) => setImmediate(resolve));

    expect(result.status).toBe('succeeded');
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });
});

/** The descriptors this process holds on files under `dir`. */
async function descriptorsUnder(workspace: string): Promise<string[]> {
  const dir = await realpath(workspace);
  const targets = await Promise.all(
    (await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')),
  );
  return targets.filter((target) => target.startsWith(`${dir}${path.sep}`));
}

describe.skipIf(!existsSync('/proc/self/fd'))('descriptors of finished runs (Linux /proc/self/fd)', () => {
  it('a finished run holds no descriptor on its workspace, while the harness is still open', async () => {
    // Long enough for the memory to cut it and save it whole to the scope's output log, an append kept open.
    const page = defineTool({
      name: 'fetch_page',
      description: 'Fetches one long page.',
      input: z.object({ page: z.number() }),
      readOnly: true,
      execute: ({ page: n }) => `page ${n}: ${'measurement '.repeat(2_000)}`,
    });
    const backend = new ScriptedBackend((request) => {
      const done = request.messages.filter((message) => message.role === 'tool').length;
      return done < 2 ? toolCall('fetch_page', { page: done }) : submit('done');
    });
    const harness = createHarness({ backend, tools: [page], decomposition: false, verification: false });
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => harness.run(`fetch batch ${i}`)));
    expect(results.map((r) => r.status)).toEqual(Array(5).fill('succeeded'));
    for (const result of results) {
      expect(await readdir(path.join(result.workspace, '.harness', 'outputs'))).not.toEqual([]);
      // The scope's output log stayed open until it went idle (30 s) or harness.close().
      expect(await descriptorsUnder(result.workspace), result.workspace).toEqual([]);
    }
    await harness.close();
  });
});
