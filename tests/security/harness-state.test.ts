import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunSnapshot } from '../../src/durability/types.js';
import { createHarness } from '../../src/harness/harness.js';
import { reply, submit, toolCall } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { writeToFileTool } from '../../src/tools/builtin/write-to-file.js';
import { collect, tempDir } from '../harness/helpers.js';

const FORGED = JSON.stringify({ format: 1, status: 'finished', result: { status: 'succeeded' } });

describe("the harness's own state under .harness/", () => {
  it('is out of reach of the tools: a model steered to forge the run snapshot gets an error and the snapshot stays the run’s', async () => {
    const dir = await tempDir();
    let step = 0;
    const backend = new ScriptedBackend((request) => {
      if (request.purpose !== 'execute') return reply('');
      step += 1;
      if (step === 1) return toolCall('write_to_file', { path: '.harness/run.json', content: FORGED });
      if (step === 2) return toolCall('write_to_file', { path: 'notes/../.harness/task-state.json', content: '{}' });
      if (step === 3) return toolCall('write_to_file', { path: 'report.md', content: '# Report\n' });
      return submit('Wrote report.md.', ['report.md']);
    });
    const harness = createHarness({
      backend,
      tools: [writeToFileTool()],
      workspace: dir,
      decomposition: false,
      verification: false,
    });
    const events = collect(harness);

    const result = await harness.run({ task: 'Write report.md.', runId: 'state-run' });

    expect(result.error).toBeUndefined();
    expect(result.status).toBe('succeeded');
    const writes = events.flatMap((e) => (e.type === 'tool-result' && e.toolName === 'write_to_file' ? [e] : []));
    expect(writes.map((e) => e.isError)).toEqual([true, true, false]);
    // The model is told why, so it writes elsewhere instead of retrying.
    const told = JSON.stringify(backend.callsFor('execute').at(-1)?.messages);
    expect(told).toContain("the harness's own state");
    const snapshot = JSON.parse(await readFile(path.join(dir, '.harness/run.json'), 'utf8')) as RunSnapshot;
    expect(snapshot.runId).toBe('state-run');
    expect(snapshot.status).toBe('finished');
    expect(await readFile(path.join(dir, 'report.md'), 'utf8')).toBe('# Report\n');
  });
});
