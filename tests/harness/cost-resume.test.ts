/**
 * `limits.maxCost` across a resume: the cost so far is the run's, read from the report tally its snapshot carries,
 * not a counter that starts again at 0 in the process that resumes it.
 */
import { describe, expect, it } from 'vitest';
import { createHarness, type GenerateResult } from '../../src/index.js';
import { ScriptedBackend, planOf, submit } from '../../src/testing/index.js';
import { MemoryRunStore } from '../durability/memory-store.js';
import { tempDir } from './helpers.js';

const TASK = 'Collect two facts about owls and write owls.md with both.';

/** Answers with 100 output tokens: 0.1 USD at the prices below. */
const used = (step: GenerateResult): GenerateResult => ({ ...step, usage: { inputTokens: 50, outputTokens: 100 } });

/** Every call's worst case is 1 USD (1 000 reserved output tokens at 1 000 USD per million; input is free). */
const options = (backend: ScriptedBackend, workspace: string, store: MemoryRunStore) => ({
  backend,
  workspace,
  store,
  verification: false,
  pricing: { currency: 'USD', inputPerMTok: 0, outputPerMTok: 1000 },
  limits: { maxOutputTokens: 1000, maxCost: 1.15 },
});

describe('limits.maxCost and harness.resume()', () => {
  it('counts what the run spent before it stopped', async () => {
    const workspace = await tempDir();
    const store = new MemoryRunStore();
    const first = new ScriptedBackend({ plan: [used(planOf('a', 'b'))], execute: [used(submit('A'))] });
    const harness = createHarness(options(first, workspace, store));
    const controller = new AbortController();
    harness.on('subtask-finish', () => controller.abort());
    const stopped = await harness.run({ task: TASK, runId: 'owls', signal: controller.signal });
    await harness.close();
    expect(stopped.status).toBe('aborted');
    expect(stopped.report.cost?.total).toBeCloseTo(0.2, 12);

    // Resumed, the next call could take the run to 0.2 + 1 > 1.15: refused. A count restarted at 0 would allow it.
    const second = new ScriptedBackend({ execute: [used(submit('B'))], synthesize: [used(submit('A and B'))] });
    const resumed = await createHarness(options(second, workspace, store)).resume('owls', { workspace });
    expect(second.calls).toHaveLength(0);
    expect(resumed.status).toBe('failed');
    expect(resumed.error?.code).toBe('cost-limit');
    expect(resumed.error?.message).toContain('spent 0.2 USD');
    expect(resumed.report.cost?.total).toBeCloseTo(0.2, 12);
    expect(resumed.deliverable.answer).toContain('A');
  });
});
