import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HarnessError } from '../../src/errors.js';
import { createHarness, type Harness } from '../../src/harness/harness.js';
import { attachmentNames } from '../../src/modes/shared/intake.js';
import type { HarnessOptions } from '../../src/modes/shared/options.js';
import { submit } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { tempDir } from './helpers.js';

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close();
  vi.restoreAllMocks();
});

function harness(options: Partial<HarnessOptions> = {}): Harness {
  const made = createHarness({
    backend: new ScriptedBackend(() => submit('done')),
    decomposition: false,
    verification: false,
    store: false,
    ...options,
  });
  harnesses.push(made);
  return made;
}

/** The HarnessError `promise` rejects with; fails the test on anything else. */
async function rejection(promise: Promise<unknown>): Promise<HarnessError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (HarnessError.isInstance(error)) return error;
  throw new Error(`expected a HarnessError, got ${String(error)}`);
}

describe('resume() with bad options', () => {
  it('takes null as no options: the usual run-not-found, never a TypeError', async () => {
    const error = await rejection(harness().resume('run-1', null as never));
    expect(error.code).toBe('run-not-found');
  });

  it.each([
    ['a workspace that is a number', { workspace: 5 }, 'workspace must be'],
    ['an empty workspace', { workspace: '' }, 'workspace must be'],
    ['a signal that is not an AbortSignal', { signal: 'stop' }, 'signal must be an AbortSignal'],
    ['a store that is not a RunStore', { store: {} }, 'store must be a RunStore'],
    ['a misspelt key', { workspce: '/tmp/x' }, '`workspce` is not one of them'],
    ['a string', 'run-dir', 'got string'],
  ])('rejects %s with invalid-input saying what it takes', async (_, options, says) => {
    const error = await rejection(harness().resume('run-1', options as never));
    expect(error.code).toBe('invalid-input');
    expect(error.message).toContain(says);
    expect(error.message).toContain('harness.resume(runId, options?) takes');
  });
});

describe('timeouts a timer cannot wait', () => {
  it.each([['limits', 'timeoutMs'] as const, ['limits', 'toolTimeoutMs'] as const])(
    'refuses %s.%s above 2^31 - 1 ms when the harness is created, saying what to do',
    (group, key) => {
      let thrown: unknown;
      try {
        harness({ [group]: { [key]: 2 ** 31 } });
      } catch (error) {
        thrown = error;
      }
      expect(HarnessError.isInstance(thrown) && thrown.code).toBe('invalid-options');
      expect((thrown as Error).message).toContain(`\`${group}.${key}\`: must be at most 2147483647 ms`);
      expect((thrown as Error).message).toContain('resume the run');
    },
  );

  it('still accepts the longest timeout a timer can wait, and the run succeeds', async () => {
    const result = await harness({ limits: { timeoutMs: 2 ** 31 - 1 } }).run('do it');
    expect(result.status).toBe('succeeded');
  });
});

describe('many attachments', () => {
  it('names 5 000 same-named attachments in linear work: each name is tried about once', () => {
    const sources = Array.from({ length: 5_000 }, (_, i) => `/inbox/${i}/report.pdf`);
    const has = vi.spyOn(Set.prototype, 'has');
    const names = attachmentNames(sources);
    const lookups = has.mock.calls.length;
    has.mockRestore();
    expect(new Set(names).size).toBe(5_000);
    expect(names.slice(0, 3)).toEqual([
      'attachments/report.pdf',
      'attachments/report-2.pdf',
      'attachments/report-3.pdf',
    ]);
    expect(names[4_999]).toBe('attachments/report-5000.pdf');
    // The quadratic search tried every earlier suffix again: 12.5 million lookups for these names.
    expect(lookups).toBeLessThanOrEqual(3 * sources.length);
  });

  it('skips a name an attachment already has, and keeps counting from there', () => {
    expect(attachmentNames(['/a/x-2.txt', '/b/x.txt', '/c/x.txt', '/d/x.txt'])).toEqual([
      'attachments/x-2.txt',
      'attachments/x.txt',
      'attachments/x-3.txt',
      'attachments/x-4.txt',
    ]);
  });

  it('copies 300 same-named attachments through a run, in order, each under its own name', async () => {
    const dir = await tempDir();
    const sources: string[] = [];
    for (let i = 0; i < 300; i++) {
      await mkdir(path.join(dir, `d${i}`));
      const file = path.join(dir, `d${i}`, 'notes.txt');
      await writeFile(file, `note ${i}`);
      sources.push(file);
    }
    const backend = new ScriptedBackend(() => submit('done'));
    const result = await harness({ backend }).run({ task: 'read the notes', attachments: sources });
    expect(result.status).toBe('succeeded');
    const prompt = JSON.stringify(backend.calls[0]?.messages);
    expect(prompt).toContain('attachments/notes.txt');
    expect(prompt).toContain('attachments/notes-300.txt');
  });

  it('reports the first attachment in order that cannot be copied, whatever finishes first', async () => {
    const dir = await tempDir();
    const sources: string[] = [];
    for (let i = 0; i < 20; i++) {
      const file = path.join(dir, `f${i}.txt`);
      if (i !== 5 && i !== 12) await writeFile(file, 'x');
      sources.push(file);
    }
    const result = await harness().run({ task: 'read them', attachments: sources });
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('invalid-input');
    expect(result.error?.message).toContain(`Attachment "${sources[5]}" could not be copied`);
  });
});

describe('a 50 MB task', () => {
  it('ends with a context-overflow that says what to do, not a stack overflow or a frozen loop', async () => {
    const result = await harness().run('x'.repeat(50_000_000));
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('context-overflow');
    expect(result.error?.message).toContain('Shorten the request');
  }, 120_000);
});
