import { describe, expect, it } from 'vitest';
import type { GenerateRequest } from '../../src/backend/types.js';
import { createHarness } from '../../src/harness/harness.js';
import { planOf, submit, verdict } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { tempDir } from './helpers.js';

const TASK = 'Find the two facts and put both in the summary.';

function taskMessage(request: GenerateRequest | undefined): string {
  const user = request?.messages.find((m) => m.role === 'user');
  return typeof user?.content === 'string' ? user.content : '';
}

/** The rendered checkpoint of `subtaskId` in a loop's task message: from its heading to its files line. */
function checkpointBlock(text: string, subtaskId: string): string | undefined {
  return new RegExp(`### ${subtaskId}:[\\s\\S]*?\\nFiles: [^\\n]*`).exec(text)?.[0];
}

describe('createHarness: the repair loop sees what the subtasks found', () => {
  it('shows each repair the subtask checkpoints, bounded as a later subtask sees them, and the defects fixed before', async () => {
    const longFinding = `FACT-A: the bridge opened in 1932. ${'detail '.repeat(3_000)}END-OF-FINDING`;
    const backend = new ScriptedBackend({
      plan: [planOf('Find fact A', 'Find fact B')],
      execute: [submit(longFinding), submit('FACT-B: it is 1149 m long.')],
      synthesize: [submit('Summary: the bridge opened in 1932.')],
      verify: [
        verdict(false, ['The summary lacks the length of the bridge.']),
        verdict(false, ['The summary does not say where the bridge is.']),
        verdict(true),
      ],
      repair: [
        submit('Summary: the bridge opened in 1932 and is 1149 m long.'),
        submit('Summary: the Sydney Harbour Bridge opened in 1932 and is 1149 m long.'),
      ],
    });
    const result = await createHarness({ backend, workspace: await tempDir() }).run(TASK);
    expect(result.status).toBe('succeeded');

    const [first, second] = backend.callsFor('repair').map(taskMessage);
    // What the subtasks found is the repair's material: both checkpoints, the long answer bounded.
    expect(first).toContain('FACT-B: it is 1149 m long.');
    expect(first).toContain('use what they found');
    const laterSubtask = taskMessage(backend.callsFor('execute')[1]);
    const seenBySubtask = checkpointBlock(laterSubtask, 'subtask-1');
    expect(seenBySubtask).toContain('FACT-A');
    expect(checkpointBlock(first ?? '', 'subtask-1')).toBe(seenBySubtask);
    expect((seenBySubtask ?? '').length).toBeLessThan(longFinding.length);

    // The first repair has no earlier fixes to keep; the second is told which defect the first one fixed.
    expect(first).not.toContain('earlier repairs fixed');
    expect(second).toContain('Earlier reviews also found these defects, which earlier repairs fixed');
    const [, fixedPart] = (second ?? '').split('earlier repairs fixed');
    expect(fixedPart).toContain('The summary lacks the length of the bridge.');
    expect(fixedPart).not.toContain('does not say where');
    backend.assertComplete();
  });
});
