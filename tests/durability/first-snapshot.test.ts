import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import type { RunSnapshot } from '../../src/durability/types.js';
import { createHarness } from '../../src/harness/harness.js';
import { ScriptedBackend, submit, toolCall } from '../../src/testing/index.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { tempDir } from '../harness/helpers.js';
import { decide, verdictOf } from '../managed/helpers.js';
import { scenarioHarness, TASK } from './fixtures/scenario.js';

const LATENCY = 1;

/** The run's snapshot in its workspace as it is on disk right now (read synchronously, inside a listener). */
function onDisk(dir: string): RunSnapshot | undefined {
  const file = path.join(dir, '.harness', 'run.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as RunSnapshot) : undefined;
}

/** A managed run that writes report.md in one round. */
function managedHarness(dir: string, onModelCall: () => void) {
  const writeFile = defineTool({
    name: 'write_file',
    description: 'Writes a text file in the workspace.',
    input: z.object({ path: z.string(), content: z.string() }),
    execute: async ({ path: file, content }, ctx) => {
      await ctx.workspace.writeFile(file, content, { tool: 'write_file', scope: ctx.scope });
      return { text: `wrote ${file}`, files: [file] };
    },
  });
  const record = { id: 'report', description: 'report.md exists.' };
  const backend = new ScriptedBackend((request) => {
    onModelCall();
    const all = request.messages.map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n');
    const lastIsTool = request.messages.at(-1)?.role === 'tool';
    if (request.purpose === 'manage') {
      if (all.includes('[completed] report:')) return decide('done');
      return decide('execute', {
        records: [record],
        contract: { task: 'Write report.md.', acceptanceCriteria: [record.description], recordIds: ['report'] },
      });
    }
    if (request.purpose === 'execute') {
      return lastIsTool
        ? submit('Wrote it.', ['report.md'])
        : toolCall('write_file', { path: 'report.md', content: '#\n' });
    }
    if (!lastIsTool) return toolCall('read_file', { path: 'report.md' });
    return verdictOf('complete', 'clean', [{ recordId: 'report', check: 'exists', observed: '#', verdict: 'pass' }]);
  });
  // No final verification: the test is about the first snapshot, and the script has no verify reply.
  return createHarness({
    backend,
    mode: 'managed',
    managed: { finalVerification: false },
    tools: [writeFile],
    workspace: dir,
  });
}

describe('every started run can be resumed', () => {
  it.each(['sync', 'async'] as const)(
    'a pipeline run (durability %s) has its snapshot stored before run-start and before its first model call',
    async (durability) => {
      const dir = await tempDir();
      const harness = scenarioHarness(dir, LATENCY, { durability });
      let atStart: RunSnapshot | undefined;
      let atFirstCall: RunSnapshot | undefined;
      let calls = 0;
      harness.on('run-start', () => {
        atStart = onDisk(dir);
      });
      harness.on('llm-request', () => {
        if (++calls === 1) atFirstCall = onDisk(dir);
      });
      const result = await harness.run({ task: TASK, runId: 'first', attachments: [] });
      expect(result.status).toBe('succeeded');
      for (const seen of [atStart, atFirstCall]) {
        expect(seen).toMatchObject({ runId: 'first', status: 'running', input: { task: TASK, attachments: [] } });
        expect(seen?.fingerprint.hash).toEqual(expect.any(String));
      }
    },
  );

  it('a managed run has its snapshot stored before run-start and before its first model call', async () => {
    const dir = await tempDir();
    let atFirstCall: RunSnapshot | undefined;
    let calls = 0;
    const harness = managedHarness(dir, () => {
      if (++calls === 1) atFirstCall = onDisk(dir);
    });
    let atStart: RunSnapshot | undefined;
    harness.on('run-start', () => {
      atStart = onDisk(dir);
    });
    const result = await harness.run({ task: 'Write report.md.', runId: 'managed-first' });
    expect(result.status).toBe('succeeded');
    expect(atStart).toMatchObject({ runId: 'managed-first', mode: 'managed', status: 'running' });
    expect(atFirstCall).toMatchObject({ runId: 'managed-first', mode: 'managed', status: 'running' });
  });

  it.each(['sync', 'async'] as const)(
    'a pipeline run (durability %s) stopped right at run-start is resumed to the end',
    async (durability) => {
      const dir = await tempDir();
      const first = scenarioHarness(dir, LATENCY, { durability });
      const controller = new AbortController();
      first.on('run-start', () => controller.abort());
      const stopped = await first.run({ task: TASK, runId: 'stopped', signal: controller.signal });
      await first.close();
      expect(stopped.status).toBe('aborted');

      const again = scenarioHarness(dir, LATENCY, { durability });
      const result = await again.resume('stopped', { workspace: dir });
      expect(result.status).toBe('succeeded');
      expect(result.report.resumes.count).toBe(1);
      expect(result.deliverable.files).toContain('final.md');
    },
  );
});
