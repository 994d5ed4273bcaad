import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pythonInterpreterTool } from '../../../src/tools/builtin/python-interpreter.js';
import type { ToolOutput } from '../../../src/tools/types.js';
import { createTestContext, type TestContext } from './support/context.js';

let test: TestContext | undefined;
afterEach(async () => {
  await test?.dispose();
  test = undefined;
});

const textOf = (output: ToolOutput): string => (typeof output === 'string' ? output : output.text);

async function session(maxOutputChars?: number): Promise<(code: string) => Promise<string>> {
  test = await createTestContext();
  const ctx = test.ctx;
  const tool = pythonInterpreterTool({ sandbox: 'none', ...(maxOutputChars ? { maxOutputChars } : {}) });
  return async (code) => textOf(await tool.execute({ code }, ctx));
}

describe('python_interpreter protocol cannot be forged or overflowed by the program', () => {
  it('treats a printed end marker with bad JSON as plain output, and the session goes on', async () => {
    const run = await session();
    await run('kept = 7');
    // Whatever marker the driver hands the process (its old one was sys.argv[1]) is printed with broken JSON after it.
    const text = await run(
      'import sys\nmarker = sys.argv[1] if len(sys.argv) > 1 else "__HH_0000000000000000__"\nprint("\\n" + marker + "{not json")\nprint("after")',
    );
    expect(text).toContain('{not json');
    expect(text).toContain('after');
    expect(await run('kept * 6')).toBe('--- result ---\n42');
  });

  it('ends the session, without throwing, when the program writes garbage on the result channel', async () => {
    const run = await session();
    const text = await run(
      [
        'import os, stat',
        'for fd in map(int, os.listdir("/proc/self/fd")):',
        '    try:',
        '        if fd > 2 and (stat.S_ISFIFO(os.fstat(fd).st_mode) or stat.S_ISSOCK(os.fstat(fd).st_mode)):',
        '            os.write(fd, b"{garbage\\n")',
        '    except OSError:',
        '        pass',
      ].join('\n'),
    );
    expect(text).toMatch(
      /The Python session was ended: it sent a malformed result message on the harness's result channel/,
    );
    expect(await run('6 * 7')).toBe('--- result ---\n42');
  });

  it('survives a background thread flooding stdout after the cell returned; the next cell finishes normally', async () => {
    const run = await session(2_000);
    await run(
      [
        'import sys, threading',
        'stop = threading.Event()',
        'def flood():',
        '    written = 0',
        '    while not stop.is_set():',
        '        sys.stdout.write("x" * 65536)',
        '        written += 65536',
        '        with open("flood-count.txt", "w") as f:',
        '            f.write(str(written))',
        'flooder = threading.Thread(target=flood, daemon=True)',
        'flooder.start()',
      ].join('\n'),
    );
    // Long enough for the flood to overflow an unbounded buffer (it did within 2 s).
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    // Between cells the harness reads nothing: the thread blocks on a full pipe after a few pipe buffers.
    const written = Number(readFileSync(path.join(test?.workspace.root ?? '', 'flood-count.txt'), 'utf8'));
    expect(written).toBeLessThan(8 * 1024 * 1024);
    // The next cell ends the flood first (what the thread wrote meanwhile is bounded output), then prints its own line.
    const text = await run('stop.set()\nflooder.join()\nprint("still here")\n20 + 22');
    expect(text).toContain('still here');
    expect(text).toContain('--- result ---\n42');
    expect(text.length).toBeLessThan(3_000);
  });
});
