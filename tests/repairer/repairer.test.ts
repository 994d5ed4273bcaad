import { describe, expect, it } from 'vitest';
import type { ExecutorResult, ExecutorRunInput } from '../../src/contracts/executor.js';
import { DataMark } from '../../src/prompts/datamark.js';
import { mergeRepair, Repairer } from '../../src/repairer/repairer.js';
import type { Workspace } from '../../src/workspace/types.js';

/** A workspace whose files are the keys of `present`; the repair loop may delete some through `deleteOnRun`. */
function workspaceWith(files: string[]): Workspace & { present: Set<string> } {
  const present = new Set(files);
  return { root: '/tmp/none', present, exists: async (file: string) => present.has(file) } as unknown as Workspace & {
    present: Set<string>;
  };
}
const workspace = workspaceWith(['a.md', 'b.md']);
const MARK = new DataMark('0123456789abcdef');

function executorReturning(result: Partial<ExecutorResult>) {
  const inputs: ExecutorRunInput[] = [];
  return {
    inputs,
    async run(input: ExecutorRunInput): Promise<ExecutorResult> {
      inputs.push(input);
      return {
        status: 'completed',
        answer: '',
        files: [],
        iterations: 1,
        usage: { inputTokens: 0, outputTokens: 0 },
        peakRequestTokens: 0,
        ...result,
      };
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
      dataMark: MARK,
    });
    const input = executor.inputs[0]!;
    expect(input).toMatchObject({ purpose: 'repair', scope: 'repair-2', request: 'REQ', maxIterations: 50 });
    expect(input.objective).toContain(`1. DEFECT-ONE [file: ${MARK.inline('a.md')}]`);
    expect(input.objective).toContain('2. DEFECT-TWO');
    expect(input.priorState).toContain(MARK.block('OLD-ANSWER'));
    // The loop runs with the boundary its prior state was marked with.
    expect(input.dataMark).toBe(MARK);
    expect(outcome.deliverable).toEqual({ answer: 'fixed', files: ['a.md', 'b.md'] });
  });

  it('shows the subtask checkpoints after the deliverable, and the defects to keep fixed, only when there are any', async () => {
    const executor = executorReturning({ answer: 'fixed' });
    const base = { runId: 'r', request: 'REQ', deliverable: { answer: 'OLD', files: [] }, workspace, dataMark: MARK };
    await new Repairer({ executor }).repair({ ...base, defects: [{ description: 'D' }], attempt: 1 });
    await new Repairer({ executor }).repair({
      ...base,
      defects: [{ description: 'D2' }],
      attempt: 2,
      subtasks: [
        {
          id: 'subtask-1',
          title: 'Research',
          objective: 'o',
          expectedOutput: 'e',
          status: 'failed',
          attempts: 2,
          answer: 'FOUND-THIS',
          files: ['notes.md'],
          error: 'ran out of time',
        },
      ],
      fixedDefects: [{ description: 'FIXED-BEFORE', artifact: 'a.md' }],
    });
    const [bare, full] = executor.inputs;
    expect(bare?.priorState).not.toContain('Results of the earlier subtasks');
    expect(bare?.objective).not.toContain('material');
    expect(bare?.objective).not.toContain('earlier repairs fixed');
    expect(full?.priorState).toContain(`Answer:\n${MARK.block('FOUND-THIS')}\nFiles: ${MARK.inline('notes.md')}`);
    expect(full?.priorState).toContain(`It failed: ${MARK.inline('ran out of time')}`);
    expect(full?.priorState?.indexOf('Current deliverable')).toBeLessThan(
      full?.priorState?.indexOf('Results of the earlier subtasks') ?? -1,
    );
    expect(full?.objective).toContain('use what they found');
    expect(full?.objective).toContain(`which earlier repairs fixed; keep them fixed`);
    expect(full?.objective).toContain(`1. FIXED-BEFORE [file: ${MARK.inline('a.md')}]`);
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

  it('merges a completed repair: a new answer replaces the old, its files join the delivered ones', async () => {
    const executor = executorReturning({ answer: '', files: ['chart.png'] });
    const outcome = await new Repairer({ executor }).repair({
      runId: 'r',
      request: 'REQ',
      deliverable: { answer: 'KEEP-ME', files: ['a.md', 'b.md'] },
      defects: [{ description: 'add a chart' }],
      attempt: 1,
      workspace: workspaceWith(['a.md', 'b.md', 'chart.png']),
    });
    expect(outcome.deliverable).toEqual({ answer: 'KEEP-ME', files: ['a.md', 'b.md', 'chart.png'] });
  });

  it('drops from the deliverable a file the repair deleted, and keeps a claimed file that never existed', async () => {
    const files = workspaceWith(['a.md', 'old.md']);
    const executor = {
      async run(): Promise<ExecutorResult> {
        files.present.delete('old.md');
        return {
          status: 'completed',
          answer: 'fixed',
          files: ['a.md'],
          iterations: 1,
          usage: { inputTokens: 0, outputTokens: 0 },
          peakRequestTokens: 0,
        };
      },
    };
    const outcome = await new Repairer({ executor }).repair({
      runId: 'r',
      request: 'REQ',
      deliverable: { answer: 'OLD', files: ['a.md', 'old.md', 'missing.md'] },
      defects: [{ description: 'remove old.md' }],
      attempt: 1,
      workspace: files,
    });
    expect(outcome.deliverable).toEqual({ answer: 'fixed', files: ['a.md', 'missing.md'] });
  });

  it('mergeRepair is pure: nothing existed before, nothing is dropped', () => {
    expect(
      mergeRepair(
        { answer: 'A', files: ['x'] },
        { answer: ' ', files: ['y', 'x'] },
        { existedBefore: new Set(), stillThere: new Set() },
      ),
    ).toEqual({ answer: 'A', files: ['x', 'y'] });
  });
});
