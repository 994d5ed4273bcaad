import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RunSnapshot } from '../../src/durability/types.js';
import { createHarness, type Harness } from '../../src/harness/harness.js';
import { submit, toolCall, verdict } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { tempDir, textOf } from '../harness/helpers.js';
import { MemoryRunStore } from './memory-store.js';

const TASK = 'Write the quarterly report to report.md.';
const CONTENT = 'Q3 revenue grew 4 %.';

/**
 * A tool that is not read-only and, in the process a crash kills, never gets to write: the store keeps the snapshot
 * journaling its call as started, and nothing after it.
 */
const writeReport = defineTool({
  name: 'write_to_file',
  description: 'Writes a text file.',
  input: z.object({ path: z.string(), content: z.string() }),
  execute: async ({ path }) => `writing ${path}…`,
});

function harnessOf(
  dir: string,
  store: MemoryRunStore,
  backend: ScriptedBackend,
  durability: 'sync' | 'async' = 'async',
): Harness {
  return createHarness({
    backend,
    tools: [writeReport],
    workspace: dir,
    store,
    durability,
    decomposition: false,
    limits: { repairAttempts: 0 },
  });
}

/** Runs until the write is journaled as started, then "crashes": the store keeps that snapshot and refuses later ones. */
async function crashInsideTheWrite(dir: string, store: MemoryRunStore): Promise<void> {
  store.freezeWhen = (s) =>
    s.loops?.some((loop) => loop.toolCalls.some((c) => c.toolName === 'write_to_file' && c.state === 'started')) ??
    false;
  // With durability 'async', the failed save behind the loop may stop it only after its next model call.
  const backend = new ScriptedBackend({
    execute: [toolCall('write_to_file', { path: 'report.md', content: CONTENT }, 'call-write'), submit('Written.')],
  });
  const stopped = await harnessOf(dir, store, backend).run({ task: TASK, runId: 'r1' });
  expect(stopped.error?.code).toBe('store-failed');
  expect((store.get('r1') as RunSnapshot).loops?.[0]?.toolCalls).toMatchObject([{ state: 'started' }]);
  store.failSavesWith = undefined;
  store.freezeWhen = undefined;
}

describe('harness.resume(): a call a crash interrupted', () => {
  it('is named in the records and the verify request; a verifier that then fails the work fails the run', async () => {
    const dir = await tempDir();
    const store = new MemoryRunStore();
    await crashInsideTheWrite(dir, store);

    // After the resume the model submits without redoing the write.
    const backend = new ScriptedBackend({
      execute: [submit('The report is written.')],
      verify: [verdict(false, ['report.md is not in the workspace: the interrupted write never happened.'])],
    });
    const result = await harnessOf(dir, store, backend).resume('r1');

    const interrupted = { scope: 'subtask-1', toolName: 'write_to_file' };
    expect(result.subtasks[0]?.interruptedCalls).toMatchObject([interrupted]);
    expect(result.subtasks[0]?.interruptedCalls?.[0]?.arguments).toContain('report.md');
    expect(result.deliverable.interruptedCalls).toMatchObject([interrupted]);

    const request = textOf(backend.callsFor('verify')[0]);
    expect(request).toContain('interrupted by a crash');
    expect(request).toMatch(/write_to_file\(.*report\.md/);
    expect(request).toContain('check that its work is present');

    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('verification-failed');
    backend.assertComplete();
  });

  it('is still named after a second crash in the resumed loop', async () => {
    const dir = await tempDir();
    const store = new MemoryRunStore();
    await crashInsideTheWrite(dir, store);

    // The first resume answers the call as interrupted, then stops while the model is asked what to do next (with
    // durability 'sync', the round's checkpoint holding the answer is stored before that call).
    const second = new ScriptedBackend({ execute: [submit('never sent')] });
    const resumed = harnessOf(dir, store, second, 'sync');
    const controller = new AbortController();
    resumed.on('llm-request', () => controller.abort());
    const stopped = await resumed.resume('r1', { signal: controller.signal });
    expect(stopped.status).toBe('aborted');
    expect((store.get('r1') as RunSnapshot).loops?.[0]?.interruptedCalls).toMatchObject([
      { toolName: 'write_to_file' },
    ]);

    const backend = new ScriptedBackend({
      execute: [submit('Done.')],
      verify: [verdict(false, ['report.md is missing'])],
    });
    const result = await harnessOf(dir, store, backend).resume('r1');
    expect(result.subtasks[0]?.interruptedCalls).toMatchObject([{ scope: 'subtask-1', toolName: 'write_to_file' }]);
    expect(textOf(backend.callsFor('verify')[0])).toContain('was interrupted by a crash and never re-run');
    expect(result.status).toBe('failed');
  });

  it('bounds the arguments it names', async () => {
    const dir = await tempDir();
    const store = new MemoryRunStore();
    store.freezeWhen = (s) => s.loops?.some((loop) => loop.toolCalls.some((c) => c.state === 'started')) ?? false;
    const long = 'x'.repeat(20_000);
    const first = new ScriptedBackend({ execute: [toolCall('write_to_file', { path: 'big.md', content: long })] });
    await harnessOf(dir, store, first).run({ task: TASK, runId: 'r1' });
    store.failSavesWith = undefined;
    store.freezeWhen = undefined;

    const backend = new ScriptedBackend({ execute: [submit('Done.')], verify: [verdict(true)] });
    const result = await harnessOf(dir, store, backend).resume('r1');
    const [call] = result.deliverable.interruptedCalls ?? [];
    expect(call?.arguments).toContain('big.md');
    expect(call?.arguments.length).toBeLessThan(1_000);
    expect(textOf(backend.callsFor('verify')[0]).length).toBeLessThan(long.length);
    // The verifier passed it: the run succeeds, its status resting on that verdict.
    expect(result.status).toBe('succeeded');
  });
});
