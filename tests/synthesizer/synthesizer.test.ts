import { describe, expect, it } from 'vitest';
import type { ExecutorResult, ExecutorRunInput } from '../../src/contracts/executor.js';
import type { SubtaskRecord } from '../../src/contracts/work.js';
import { Synthesizer } from '../../src/synthesizer/synthesizer.js';
import type { Workspace } from '../../src/workspace/types.js';

const workspace = { root: '/tmp/none' } as Workspace;

function recordingExecutor(result: Partial<ExecutorResult> = {}) {
  const inputs: ExecutorRunInput[] = [];
  return {
    inputs,
    async run(input: ExecutorRunInput): Promise<ExecutorResult> {
      inputs.push(input);
      return {
        status: 'completed',
        answer: 'final',
        files: ['out.md'],
        iterations: 2,
        usage: { inputTokens: 0, outputTokens: 0 },
        peakRequestTokens: 0,
        ...result,
      };
    },
  };
}

const records: SubtaskRecord[] = [
  {
    id: 'subtask-1',
    title: 'Gather',
    objective: '',
    expectedOutput: '',
    status: 'completed',
    attempts: 1,
    answer: 'GATHERED',
    files: ['data.csv'],
  },
  {
    id: 'subtask-2',
    title: 'Chart',
    objective: '',
    expectedOutput: '',
    status: 'failed',
    attempts: 3,
    answer: '',
    files: [],
    error: 'CHART-ERROR',
  },
];

describe('Synthesizer', () => {
  it('runs one synthesize loop over the checkpoints and names failed subtasks', async () => {
    const executor = recordingExecutor();
    const outcome = await new Synthesizer({ executor }).synthesize({
      runId: 'r',
      request: 'REQ',
      subtasks: records,
      workspace,
    });
    expect(outcome.deliverable).toEqual({ answer: 'final', files: ['out.md'] });
    const input = executor.inputs[0]!;
    expect(input).toMatchObject({ purpose: 'synthesize', scope: 'synthesis', request: 'REQ' });
    expect(input.priorState).toContain('GATHERED');
    expect(input.priorState).toContain('data.csv');
    expect(input.priorState).toContain('CHART-ERROR');
    expect(input.objective).toContain('subtask-2 "Chart"');
    expect(input.objective).toContain('1 subtask(s) failed');
  });

  it('needs an executor', () => {
    expect(() => new Synthesizer({} as never)).toThrow(/executor/);
  });
});
