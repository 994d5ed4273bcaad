import { describe, expect, it } from 'vitest';
import { IterationBudget } from '../../src/modes/pipeline/iteration-budget.js';

// 200 iterations, 4 subtasks, repairs on: 20 held back for synthesis and 30 for a repair leave the execute stage
// 150; each subtask not started keeps 18 (half of a fair share).
const shape = { total: 200, subtasks: 4, repairs: true };

describe('IterationBudget with subtasks at the same time', () => {
  it('gives subtasks run one at a time what the execute stage has left less what later subtasks keep', () => {
    const budget = new IterationBudget(shape);
    expect(budget.takeForSubtask(3)).toBe(150 - 3 * 18);
    budget.release(96);
    budget.spend(10);
    expect(budget.takeForSubtask(2)).toBe(150 - 10 - 2 * 18);
  });

  it('shares what is free between subtasks starting together, and holds each allowance until released', () => {
    const budget = new IterationBudget(shape);
    const first = budget.takeForSubtask(3, 2);
    const second = budget.takeForSubtask(2, 1);
    expect([first, second]).toEqual([57, 57]);
    // Both held: a third subtask gets what the stage has left beside them.
    expect(budget.takeForSubtask(1)).toBe(150 - 57 - 57 - 18);
  });

  it('never lets the attempts running at once hold more than the execute stage has', () => {
    const budget = new IterationBudget(shape);
    const held = [
      budget.takeForSubtask(3),
      budget.takeForSubtask(2),
      budget.takeForSubtask(1),
      budget.takeForSubtask(0),
    ];
    expect(held.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(150);
    expect(budget.takeForSubtask(0)).toBe(0);
    budget.release(held[0] as number);
    budget.spend(5);
    expect(budget.takeForSubtask(0)).toBe((held[0] as number) - 5);
  });
});
