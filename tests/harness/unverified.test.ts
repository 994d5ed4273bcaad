import { describe, expect, it } from 'vitest';
import { createHarness } from '../../src/harness/harness.js';
import { reply, submit, verdict } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { collect, tempDir, textOf } from './helpers.js';

const TASK = 'Write a haiku about owls.';

/** A verify reply that never parses as a verdict. */
const malformed = () => reply('Looks fine to me.');

describe('createHarness: a run without a usable verdict is unverified, never succeeded', () => {
  it('ends unverified, keeping the deliverable, when every verify reply is malformed (fresh call included)', async () => {
    const backend = new ScriptedBackend({
      execute: [submit('Silent wings at dusk')],
      verify: [malformed(), malformed(), malformed(), malformed()],
    });
    const harness = createHarness({ backend, workspace: await tempDir(), decomposition: false });
    const events = collect(harness);
    const result = await harness.run(TASK);
    expect(result.status).toBe('unverified');
    expect(result.error?.code).toBe('verification-unavailable');
    expect(result.error?.message).toContain("result.status === 'unverified'");
    expect(result.deliverable.answer).toBe('Silent wings at dusk');
    expect(result.verdicts).toMatchObject([{ status: 'unverified', passed: false }]);
    expect(backend.callsFor('repair')).toHaveLength(0);
    backend.assertComplete();
    // The third call is a fresh request: the original system and user messages only, no earlier reply appended.
    const [first, , fresh] = backend.callsFor('verify');
    expect(fresh?.messages).toHaveLength(2);
    expect(fresh?.messages).toEqual(first?.messages);
    expect(events.find((e) => e.type === 'verify-finish')).toMatchObject({ status: 'unverified', passed: false });
    const finish = events.find((e) => e.type === 'run-finish');
    expect(finish).toMatchObject({ result: { status: 'unverified' } });
  });

  it('ends unverified when the verifier fails the deliverable without a defect, also in a fresh call', async () => {
    const backend = new ScriptedBackend({
      execute: [submit('Silent wings at dusk')],
      verify: [verdict(false), verdict(false), verdict(false), verdict(false)],
    });
    const result = await createHarness({ backend, workspace: await tempDir(), decomposition: false }).run(TASK);
    expect(result.status).toBe('unverified');
    expect(result.error?.message).toContain('without naming a defect');
    expect(backend.callsFor('repair')).toHaveLength(0);
    backend.assertComplete();
  });

  it('succeeds when the fresh call gives the verdict the first one could not', async () => {
    const backend = new ScriptedBackend({
      execute: [submit('Silent wings at dusk')],
      verify: [malformed(), malformed(), verdict(true)],
    });
    const result = await createHarness({ backend, workspace: await tempDir(), decomposition: false }).run(TASK);
    expect(result.status).toBe('succeeded');
    expect(result.verdicts).toMatchObject([{ status: 'passed', passed: true }]);
    expect(result).not.toHaveProperty('error');
    backend.assertComplete();
  });

  it('ends unverified, with repairRecovered null, when the verdict after a repair cannot be had', async () => {
    const backend = new ScriptedBackend({
      execute: [submit('Silent wings')],
      verify: [
        verdict(false, ['The haiku has two lines, not three.']),
        malformed(),
        malformed(),
        malformed(),
        malformed(),
      ],
      // The repair changes nothing.
      repair: [submit('Silent wings')],
    });
    const harness = createHarness({ backend, workspace: await tempDir(), decomposition: false });
    const result = await harness.run(TASK);
    expect(result.status).toBe('unverified');
    expect(result.error?.code).toBe('verification-unavailable');
    expect(result.verdicts.map((v) => v.status)).toEqual(['failed', 'unverified']);
    expect(result.report.repairs).toBe(1);
    expect(result.report.firstPassVerified).toBe(false);
    // Nothing says whether the repair recovered the deliverable.
    expect(result.report.repairRecovered).toBeNull();
    backend.assertComplete();
  });

  it('re-asks a malformed reply in the fresh call too, and says in the error that it stayed malformed', async () => {
    const backend = new ScriptedBackend({
      execute: [submit('done')],
      verify: [reply('{"passed": "yes"}'), malformed(), reply('{"passed": "yes"}'), malformed()],
    });
    const result = await createHarness({ backend, workspace: await tempDir(), decomposition: false }).run(TASK);
    expect(result.status).toBe('unverified');
    expect(result.error?.message).toContain('malformed');
    expect(textOf(backend.callsFor('verify')[3])).toContain('passed: Invalid input');
  });
});
