import { afterEach, describe, expect, it } from 'vitest';
import { createHarness } from '../../src/harness/harness.js';
import { submit, toolCalls } from '../../src/testing/replies.js';
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
