import { describe, expect, it } from 'vitest';
import { HarnessError } from '../../src/errors.js';
import { createHarness } from '../../src/harness/harness.js';
import { verdict } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { tempDir } from './helpers.js';

const TASK = 'Write a haiku about owls.';

/** An execute step that fails the way a broken stream does: retryable, so the subtask fails and the run goes on. */
const rejected = () => new HarnessError('invalid-response', 'The stream ended mid-answer.', { retryable: true });

describe('createHarness: a run that delivered nothing never succeeds', () => {
  it('ends failed with nothing-delivered when every subtask failed, even if the verifier passes the empty deliverable', async () => {
    const backend = new ScriptedBackend({
      execute: Array.from({ length: 60 }, rejected),
      verify: [verdict(true), verdict(true)],
    });
    const result = await createHarness({ backend, workspace: await tempDir(), decomposition: false }).run(TASK);
    expect(result.subtasks.map((s) => s.status)).toEqual(['failed']);
    expect(result.deliverable).toEqual({ answer: '', files: [] });
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('nothing-delivered');
    expect(result.error?.message).toContain('1 of 1 subtask(s) failed');
  });
});
