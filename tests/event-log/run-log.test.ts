import { execFileSync } from 'node:child_process';
import { appendFile, mkdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEventLog } from '../../src/event-log/read.js';
import { isDeltaEvent, type HarnessEvent } from '../../src/events.js';
import { createHarness } from '../../src/harness/harness.js';
import { planOf, submit } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { scenarioHarness, TASK } from '../durability/fixtures/scenario.js';
import { collect, tempDir } from '../harness/helpers.js';

const LATENCY = 2;
const logOf = (workspace: string) => path.join(workspace, '.harness', 'events.jsonl');

describe('the event log of a run', () => {
  it('holds every event of the run but the deltas, as listeners get them, ending with run-finish', async () => {
    const dir = await tempDir();
    const harness = scenarioHarness(dir, LATENCY);
    const seen = collect(harness);
    const result = await harness.run({ task: TASK, runId: 'r1' });
    await harness.close();

    const logged = await readEventLog(logOf(dir));
    expect(result.status).toBe('succeeded');
    expect(logged).toEqual(seen.filter((event) => !isDeltaEvent(event)));
    expect(logged[0]?.type).toBe('run-start');
    expect(logged.at(-1)).toMatchObject({ type: 'run-finish', result: { status: 'succeeded' } });
    // One line an event: what --json prints.
    const text = await readFile(logOf(dir), 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    expect(text.trimEnd().split('\n')).toHaveLength(logged.length);
    // The harness's own file: not a deliverable.
    expect(result.deliverable.files).not.toContain('.harness/events.jsonl');
  });

  it('of concurrent runs of one harness holds only its own run', async () => {
    // `workspace: {}`: each run in a temporary directory of its own.
    const harness = scenarioHarness('', LATENCY, { workspace: {} });
    const results = await Promise.all([
      harness.run({ task: TASK, runId: 'a' }),
      harness.run({ task: TASK, runId: 'b' }),
    ]);
    for (const result of results) {
      const logged = await readEventLog(logOf(result.workspace));
      expect(logged.map((event) => event.runId)).toEqual(logged.map(() => result.runId));
      expect(logged.at(-1)).toMatchObject({ type: 'run-finish', result: { status: 'succeeded' } });
    }
    await harness.close();
  });

  it('of a run stopped mid-way and resumed is whole: the events before the stop, a torn line, run-resume, the rest', async () => {
    const dir = await tempDir();
    const first = scenarioHarness(dir, LATENCY);
    const controller = new AbortController();
    first.on('subtask-finish', () => controller.abort());
    const stopped = await first.run({ task: TASK, runId: 'r1', signal: controller.signal });
    await first.close();
    expect(stopped.status).toBe('aborted');
    // What a process killed in the middle of an append leaves.
    await appendFile(logOf(dir), '{"type":"tool-call","runId":"r1","tim');

    const second = scenarioHarness(dir, LATENCY);
    const resumed = await second.resume('r1', { workspace: dir });
    await second.close();
    expect(resumed.status).toBe('succeeded');

    const types = (await readEventLog(logOf(dir))).map((event) => event.type);
    expect(types[0]).toBe('run-start');
    expect(types.filter((type) => type === 'run-finish')).toHaveLength(2);
    const resume = types.indexOf('run-resume');
    expect(resume).toBeGreaterThan(types.indexOf('subtask-finish'));
    expect(types.slice(resume)).toContain('repair-start');
    expect(types.at(-1)).toBe('run-finish');
    const lines = (await readFile(logOf(dir), 'utf8')).split('\n');
    // The torn fragment stays on a line of its own, so the resumed run's first line is whole.
    expect(lines.find((line) => line.startsWith('{"type":"tool-call","runId":"r1","tim'))).toBe(
      '{"type":"tool-call","runId":"r1","tim',
    );
  });

  it('keeps no log with eventLog: false, and hands the events to a host sink with { write }', async () => {
    const off = await tempDir();
    const quiet = scenarioHarness(off, LATENCY, { eventLog: false });
    await quiet.run({ task: TASK, runId: 'r1' });
    await quiet.close();
    await expect(stat(logOf(off))).rejects.toMatchObject({ code: 'ENOENT' });

    const dir = await tempDir();
    const written: HarnessEvent[] = [];
    const host = scenarioHarness(dir, LATENCY, {
      eventLog: { write: async (event) => void written.push(event) },
    });
    const seen = collect(host);
    await host.run({ task: TASK, runId: 'r2' });
    await host.close();
    expect(written).toEqual(seen);
    await expect(stat(logOf(dir))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('leaves the streaming deltas out unless eventLog.deltas is true', async () => {
    const streamingRun = async (eventLog: { deltas?: boolean }) => {
      const dir = await tempDir();
      const backend = new ScriptedBackend(
        { plan: [planOf('Say hi')], execute: [submit('hi there', [])] },
        { stream: true },
      );
      await createHarness({ backend, workspace: dir, verification: false, eventLog }).run('Say hi');
      return (await readEventLog(logOf(dir))).filter(isDeltaEvent).map((event) => event.type);
    };
    expect(await streamingRun({})).toEqual([]);
    expect(await streamingRun({ deltas: true })).toContain('text-delta');
  });

  it('holds secrets redacted and untrusted text as data', async () => {
    const dir = await tempDir();
    const untrusted = 'token sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789 </script><script>alert(1)</script>';
    const backend = new ScriptedBackend({ plan: [planOf('Look')], execute: [submit(untrusted, [])] });
    await createHarness({ backend, workspace: dir, verification: false }).run('Look');
    const text = await readFile(logOf(dir), 'utf8');
    expect(text).not.toContain('sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789');
    const finish = (await readEventLog(logOf(dir))).find((event) => event.type === 'subtask-finish');
    expect(finish?.record.answer).toBe('token [REDACTED] </script><script>alert(1)</script>');
  });

  it.each([
    ['a directory', (file: string) => mkdir(file, { recursive: true })],
    [
      'a FIFO',
      async (file: string) => {
        await mkdir(path.dirname(file), { recursive: true });
        execFileSync('mkfifo', [file]);
      },
    ],
  ] as const)(
    'stops at a failed append (%s where the log goes) and says so through onListenerError; the run goes on',
    async (_label, plant) => {
      const dir = await tempDir();
      await plant(logOf(dir));
      const errors: unknown[] = [];
      const harness = scenarioHarness(dir, LATENCY, { onListenerError: (error) => errors.push(error) });
      const result = await harness.run({ task: TASK, runId: 'r1' });
      await harness.close();
      expect(result.status).toBe('succeeded');
      expect(errors).toHaveLength(1);
    },
  );
});
