import { describe, expect, it } from 'vitest';
import type { ExecutorResult, ExecutorRunInput } from '../../src/executor/types.js';
import { Repairer } from '../../src/repairer/repairer.js';
import type { Workspace } from '../../src/workspace/types.js';

const workspace = { root: '/tmp/none' } as Workspace;

function executorReturning(result: Partial<ExecutorResult>) {
  const inputs: ExecutorRunInput[] = [];
  return {
    inputs,
    async run(input: ExecutorRunInput): Promise<ExecutorResult> {
      inputs.push(input);
      return { status: 'completed', answer: '', files: [], iterations: 1, usage: { inputTokens: 0, outputTokens: 0 }, peakRequestTokens: 0, ...result };
    },
  };
}

describe('Repairer', () => {
  it('puts the defects and the current deliverable into one repair loop', async () => {
    const executor = executorReturning({ answer: 'fixed', files: ['a.md', 'b.md'] });
    const outcome = await new Repairer({ executor }).repair({
      runId: 'r',
      request: 'REQ',
      deliverable: { answer: 'OLD-ANSWER', files: ['a.md'] },
      defects: [{ description: 'DEFECT-ONE', artifact: 'a.md' }, { description: 'DEFECT-TWO' }],
      attempt: 2,
      workspace,
    });
    const input = executor.inputs[0]!;
    expect(input).toMatchObject({ purpose: 'repair', scope: 'repair-2', request: 'REQ', maxIterations: 50 });
    expect(input.objective).toContain('1. DEFECT-ONE [file: a.md]');
    expect(input.objective).toContain('2. DEFECT-TWO');
    expect(input.priorState).toContain('OLD-ANSWER');
    expect(outcome.deliverable).toEqual({ answer: 'fixed', files: ['a.md', 'b.md'] });
  });

  it('keeps the previous deliverable where the loop hands back nothing', async () => {
    const executor = executorReturning({ status: 'failed', answer: '', files: [] });
    const outcome = await new Repairer({ executor }).repair({
      runId: 'r',
      request: 'REQ',
      deliverable: { answer: 'OLD', files: ['a.md'] },
      defects: [{ description: 'x' }],
      attempt: 1,
      workspace,
      maxIterations: 7,
    });
    expect(outcome).toMatchObject({ status: 'failed', deliverable: { answer: 'OLD', files: ['a.md'] } });
    expect(executor.inputs[0]?.maxIterations).toBe(7);
  });
});
