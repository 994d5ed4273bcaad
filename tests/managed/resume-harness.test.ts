import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import type { GenerateRequest, GenerateResult } from '../../src/backend/types.js';
import type { HarnessEvent } from '../../src/events.js';
import { createHarness } from '../../src/harness/harness.js';
import type { ManagedRunResult, ManagedSnapshotState } from '../../src/modes/managed/index.js';
import { ScriptedBackend } from '../../src/testing/index.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { collect, tempDir } from '../harness/helpers.js';
import { reportModel } from './helpers.js';

const TASK = 'Write report.md with the heading "# Rivers".';
/** Replies as a function of the request only, so the resumed run is asked what the stopped one would have been. */
const model = (request: GenerateRequest): GenerateResult => reportModel(request, { write: 'write-1', read: 'read-1' });

/** A managed harness on `dir` whose write tool counts its invocations. */
function managedHarness(dir: string, writes: string[]) {
  const writeFile = defineTool({
    name: 'write_file',
    description: 'Writes a text file in the workspace.',
    input: z.object({ path: z.string(), content: z.string() }),
    execute: async ({ path: file, content }, ctx) => {
      writes.push(file);
      await ctx.workspace.writeFile(file, content, { tool: 'write_file', scope: ctx.scope });
      return { text: `wrote ${file}`, files: [file] };
    },
  });
  return createHarness({
    backend: new ScriptedBackend((request) => model(request)),
    mode: 'managed',
    tools: [writeFile],
    workspace: dir,
  });
}

/**
 * What the default store holds of the run in `dir`: its snapshot with the journal lines that follow it applied (each
 * line carries the loops in progress and the state when it changed; see src/durability/journal-entry.ts).
 */
async function storedState(dir: string): Promise<Record<string, unknown>> {
  const snapshot = JSON.parse(await readFile(path.join(dir, '.harness/run.json'), 'utf8'));
  const journal = await readFile(path.join(dir, '.harness/run.journal'), 'utf8').catch(() => '');
  let current = snapshot;
  for (const line of journal.split('\n').slice(0, -1)) {
    const entry = JSON.parse(line);
    if (entry.base !== snapshot.mac) continue;
    current = { ...current, savedAt: entry.savedAt, seq: entry.seq, loops: entry.loops };
    if ('state' in entry) current.state = entry.state;
  }
  return current;
}

describe('harness.resume() of a managed run', () => {
  it('finishes a managed run stopped by abort mid-execution, without doing its executor work again', async () => {
    const dir = await tempDir();
    const writes: string[] = [];
    const first = managedHarness(dir, writes);
    const controller = new AbortController();
    let executeCalls = 0;
    // Stop while the executor's second model call (after its write) is in flight.
    first.on('llm-request', (event) => {
      if (event.purpose === 'execute' && ++executeCalls === 2) controller.abort();
    });
    const stopped = await first.run({ task: TASK, runId: 'managed-1', signal: controller.signal });
    await first.close();
    expect(stopped.status).toBe('aborted');
    expect(writes).toEqual(['report.md']);
    const snapshot = await storedState(dir);
    expect(snapshot).toMatchObject({ mode: 'managed', status: 'running', loops: [{ scope: 'execute-1' }] });
    expect((snapshot.state as ManagedSnapshotState).position).toMatchObject({ stage: 'execute', round: 1 });

    const again = managedHarness(dir, writes);
    const events: HarnessEvent[] = collect(again);
    const result = (await again.resume('managed-1', { workspace: dir })) as ManagedRunResult;
    await again.close();

    expect(result.status).toBe('succeeded');
    expect(result.taskState.records).toMatchObject([{ id: 'report', status: 'completed' }]);
    expect(await readFile(path.join(dir, 'report.md'), 'utf8')).toBe('# Rivers\n');
    // The write before the stop is not made again, and the manager's decision of round 1 is not asked again.
    expect(writes).toEqual(['report.md']);
    expect(events.filter((e) => e.type === 'manager-decision').map((e) => e.round)).toEqual([2]);
    expect(events[0]).toMatchObject({
      type: 'run-resume',
      mode: 'managed',
      stage: 'execute',
      scopes: ['execute-1'],
      savedAt: snapshot.savedAt,
      redo: { modelCalls: 1, rerunToolCalls: [], interruptedToolCalls: [] },
    });
    expect(events.every((e) => e.resumed === true)).toBe(true);
    expect(result.report.resumes.count).toBe(1);
    expect(result.report.managed.rounds).toBe(2);
    // The copy for people to read agrees with the result; the finished snapshot holds the result.
    const stateFile = JSON.parse(await readFile(path.join(dir, '.harness/task-state.json'), 'utf8'));
    expect(stateFile).toEqual(result.taskState);
    const finished = JSON.parse(await readFile(path.join(dir, '.harness/run.json'), 'utf8'));
    expect(finished).toMatchObject({ status: 'finished', result: { status: 'succeeded' } });
  }, 30_000);
});
