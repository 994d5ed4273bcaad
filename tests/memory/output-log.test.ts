import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { EventInput } from '../../src/events.js';
import { MemoryManager } from '../../src/memory/memory-manager.js';
import { deterministicText, fakeBackend, hostWorkspace, invocation, savedLines, scopeFor } from './helpers.js';

const LOG = '.harness/outputs/subtask-1.txt';

function linesNamed(observation: string): { start: number; end: number } {
  const match = /\.harness\/outputs\/subtask-1\.txt lines (\d+)-(\d+)/.exec(observation);
  expect(match, `no line range in: ${observation.slice(0, 200)}`).not.toBeNull();
  return { start: Number(match![1]), end: Number(match![2]) };
}

function warnings(events: EventInput[]) {
  return events.filter((e) => e.type === 'run-warning');
}

describe('saving full outputs through the workspace', () => {
  it("appends them through the scope's workspace, never under its root directly", async () => {
    const ws = hostWorkspace();
    const scope = scopeFor(fakeBackend(32_000), ws);
    const text = deterministicText(1, 20_000);
    const out = await new MemoryManager().boundObservation(invocation(text, 'text', 'call_1'), scope);
    expect(ws.appends).toEqual([{ path: LOG, origin: { tool: 'harness', scope: 'subtask-1' } }]);
    expect(savedLines(ws, LOG, linesNamed(out))).toBe(text);
    expect(ws.text(LOG).startsWith('===== probe call_1 =====\n')).toBe(true);
    expect(existsSync(ws.root)).toBe(false);
  });

  it('appends the parallel calls of one reply in call order with their own line ranges, however the I/O is timed', async () => {
    const ws = hostWorkspace();
    // The first append takes longest: unless appends wait for each other, later calls land first.
    ws.appendTurns = (index) => 6 - 2 * index;
    const scope = scopeFor(fakeBackend(32_000), ws);
    const memory = new MemoryManager({ observationAging: {} });
    const texts = [deterministicText(2, 12_000), 'short output, saved for aging\n', deterministicText(3, 30_000)];
    const observations = await Promise.all(
      texts.map((text, i) => memory.boundObservation(invocation(text, 'text', `call_${i}`), scope)),
    );
    const log = ws.text(LOG);
    expect([...log.matchAll(/===== probe (call_\d) =====/g)].map((m) => m[1])).toEqual(['call_0', 'call_1', 'call_2']);
    const ranges = [linesNamed(observations[0]!), linesNamed(observations[2]!)];
    expect(savedLines(ws, LOG, ranges[0]!)).toBe(texts[0]);
    expect(savedLines(ws, LOG, ranges[1]!)).toBe(texts[2]);
    // The uncut output is saved in between (for its aging digest): two lines, header and text.
    expect(ranges[1]!.start).toBe(ranges[0]!.end + 4);
    const truncations = scope.events.filter((e) => e.type === 'memory-truncate');
    expect(truncations.map((e) => e.savedLines)).toEqual(ranges);
  });

  it('counts the lines already in the log, left by an earlier attempt or written by someone else', async () => {
    const ws = hostWorkspace();
    ws.put(LOG, 'from an earlier attempt\nsecond line\n');
    const scope = scopeFor(fakeBackend(32_000), ws);
    const memory = new MemoryManager();
    const first = deterministicText(4, 10_000);
    const firstOut = await memory.boundObservation(invocation(first, 'text', 'a'), scope);
    expect(linesNamed(firstOut).start).toBe(4);
    expect(savedLines(ws, LOG, linesNamed(firstOut))).toBe(first);
    ws.put(LOG, `${ws.text(LOG)}another writer\nwas here\n`);
    const second = deterministicText(5, 10_000);
    const secondOut = await memory.boundObservation(invocation(second, 'text', 'b'), scope);
    expect(savedLines(ws, LOG, linesNamed(secondOut))).toBe(second);
  });

  it('reports a failed save as a run-warning, says so in the observation, and recovers its line count', async () => {
    const ws = hostWorkspace();
    ws.failAppends = new Error('disk quota exceeded');
    const scope = scopeFor(fakeBackend(32_000), ws);
    const memory = new MemoryManager();
    const out = await memory.boundObservation(invocation(deterministicText(6, 20_000), 'text', 'lost'), scope);
    expect(out).toContain('the full output could not be saved');
    expect(warnings(scope.events)).toEqual([
      expect.objectContaining({
        type: 'run-warning',
        code: 'output-save-failed',
        purpose: 'execute',
        scope: 'subtask-1',
      }),
    ]);
    const [warning] = warnings(scope.events) as Array<{ message: string }>;
    expect(warning!.message).toContain('disk quota exceeded');
    expect(warning!.message).toContain(LOG);
    expect(warning!.message).toContain('call lost');
    expect(scope.events.find((e) => e.type === 'memory-truncate')).not.toHaveProperty('savedTo');

    ws.failAppends = undefined;
    const text = deterministicText(7, 20_000);
    const next = await memory.boundObservation(invocation(text, 'text', 'kept'), scope);
    expect(linesNamed(next).start).toBe(2);
    expect(savedLines(ws, LOG, linesNamed(next))).toBe(text);
    expect(warnings(scope.events)).toHaveLength(1);
  });

  it('keeps the logs of two workspaces apart', async () => {
    const [a, b] = [hostWorkspace(), hostWorkspace()];
    const memory = new MemoryManager();
    const texts = [deterministicText(8, 9_000), deterministicText(9, 9_000)];
    const outA = await memory.boundObservation(invocation(texts[0]!), scopeFor(fakeBackend(32_000), a));
    const outB = await memory.boundObservation(invocation(texts[1]!), scopeFor(fakeBackend(32_000), b));
    expect([linesNamed(outA).start, linesNamed(outB).start]).toEqual([2, 2]);
    expect(savedLines(a, LOG, linesNamed(outA))).toBe(texts[0]);
    expect(savedLines(b, LOG, linesNamed(outB))).toBe(texts[1]);
  });
});
