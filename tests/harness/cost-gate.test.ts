/**
 * The gate of `limits.maxCost` on its own: calls still running count at their worst case, so parallel calls (tools
 * that call a model, run side by side) cannot pass the limit together.
 */
import { describe, expect, it } from 'vitest';
import { CostGate } from '../../src/modes/shared/cost.js';
import { RunControl } from '../../src/modes/shared/run-control.js';
import { ScriptedBackend } from '../../src/testing/index.js';

// 1 USD per million output tokens, input free: a call's worst case is its output reserve in millions.
const backend = new ScriptedBackend([], { pricing: { currency: 'USD', inputPerMTok: 0, outputPerMTok: 1 } });
const call = (maxOutputTokens: number) => ({
  purpose: 'vision' as const,
  scope: 'subtask-1',
  backend,
  requestTokens: 10,
  maxOutputTokens,
});

describe('CostGate', () => {
  it('counts calls in flight at their worst case until they end', () => {
    const control = new RunControl({ timeoutMs: 60_000, maxIterations: 10 });
    let spent = 0;
    const gate = new CostGate({ maxCost: 1, currency: 'USD', costSoFar: () => spent, control });
    const first = gate.admit(call(600_000));
    const second = gate.admit(call(400_000));
    first();
    second();
    spent = 0.5; // what the two calls really cost
    gate.admit(call(500_000))();
    expect(control.stopped).toBeUndefined();
  });

  it('refuses a call that could pass the limit with the calls still running, stops the run, and refuses every later call', () => {
    const control = new RunControl({ timeoutMs: 60_000, maxIterations: 10 });
    const gate = new CostGate({ maxCost: 1, currency: 'USD', costSoFar: () => 0.1, control });
    gate.admit(call(600_000)); // still running
    expect(() => gate.admit(call(400_000))).toThrow(
      expect.objectContaining({
        code: 'cost-limit',
        message: expect.stringContaining('spent 0.1 USD (and up to 0.6 USD more in calls still running)'),
      }),
    );
    expect(control.stopped).toBe('budget');
    expect(control.asStop(undefined, 'execute').error.code).toBe('cost-limit');
    expect(() => gate.admit(call(1))).toThrow(expect.objectContaining({ code: 'cost-limit' }));
  });

  it('refuses a call of a backend without prices: it could cost anything', () => {
    const control = new RunControl({ timeoutMs: 60_000, maxIterations: 10 });
    const gate = new CostGate({ maxCost: 100, currency: 'USD', costSoFar: () => 0, control });
    const unpriced = { ...call(1), backend: new ScriptedBackend([]) };
    expect(() => gate.admit(unpriced)).toThrow(/could cost any amount \(it has no price\)/);
  });
});
