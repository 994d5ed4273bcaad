import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseEventLog, readEventLog } from '../../src/event-log/read.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const start = { type: 'run-start', runId: 'r1', timestamp: 1, seq: 1, mode: 'pipeline', goal: 'g' };
const finish = { type: 'run-finish', runId: 'r1', timestamp: 2, seq: 2, result: { status: 'succeeded' } };

describe('readEventLog', () => {
  it('reads one event a line, in file order', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'event-log-'));
    dirs.push(dir);
    const file = path.join(dir, 'events.jsonl');
    await writeFile(file, `${JSON.stringify(start)}\n${JSON.stringify(finish)}\n`);
    expect(await readEventLog(file)).toEqual([start, finish]);
  });

  it('skips a torn last line (a crash mid-append) and a torn line a resumed run went on after', () => {
    const torn = JSON.stringify(finish).slice(0, 30);
    expect(parseEventLog(`${JSON.stringify(start)}\n${torn}`)).toEqual([start]);
    expect(parseEventLog(`${JSON.stringify(start)}\n${torn}\n${JSON.stringify(finish)}\n`)).toEqual([start, finish]);
  });

  it('reads a saved --json output: the closing result line, blank lines and unknown types are not events', () => {
    const text = [
      JSON.stringify(start),
      '',
      JSON.stringify({ type: 'from-a-newer-version', runId: 'r1', timestamp: 3 }),
      JSON.stringify([1, 2]),
      JSON.stringify(finish),
      JSON.stringify({ type: 'result', exitCode: 0, result: {} }),
    ].join('\n');
    expect(parseEventLog(text)).toEqual([start, finish]);
  });

  it('rejects a missing file with invalid-input naming the path', async () => {
    await expect(readEventLog('/nonexistent/events.jsonl')).rejects.toMatchObject({
      code: 'invalid-input',
      message: expect.stringContaining('/nonexistent/events.jsonl'),
    });
  });
});
