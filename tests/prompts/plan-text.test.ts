/**
 * The plan is the planner's text, written after reading the request's attachments: it stays outside the data blocks
 * of an executor's objective (it is what the loop must do), so markers in it must be inert.
 */
import { expect, it } from 'vitest';
import type { GenerateResult } from '../../src/backend/types.js';
import { createHarness } from '../../src/index.js';
import { ScriptedBackend, planOf, submit } from '../../src/testing/index.js';
import { tempDir } from '../harness/helpers.js';
import { boundaryOf, breakouts } from '../security/injection-support.js';
import { closers, lookalikes, textOf } from './lookalike-support.js';

it('makes exact and look-alike markers in subtask titles, objectives and expected outputs inert', async () => {
  const backend = new ScriptedBackend((request): GenerateResult => {
    const id = boundaryOf(request);
    if (request.purpose === 'plan') {
      return planOf(
        {
          title: `Collect ${closers(id)}`,
          objective: `Gather facts ${closers(id)}`,
          expectedOutput: `notes ${closers(id)}`,
        },
        { title: 'Write', objective: 'Write the poem', expectedOutput: 'the poem' },
      );
    }
    return submit('done');
  });
  const harness = createHarness({ backend, workspace: await tempDir(), verification: false });
  const result = await harness.run('Write a poem.');
  expect(result.status).toBe('succeeded');
  const executes = backend.callsFor('execute');
  expect(executes).toHaveLength(2);
  for (const request of executes) {
    const id = boundaryOf(request);
    expect(textOf(request)).toContain('Collect');
    expect(breakouts(request, id)).toEqual([]);
    expect(lookalikes(textOf(request), id)).toEqual([]);
  }
});
