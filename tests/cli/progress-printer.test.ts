import { describe, expect, it } from 'vitest';
import { ProgressPrinter } from '../../src/cli/progress-printer.js';
import type { HarnessEvent } from '../../src/events.js';

const base = { runId: 'run-1', timestamp: 0 };
const delta = (callId: string, purpose: 'plan' | 'execute', text: string): HarnessEvent => ({
  ...base,
  type: 'text-delta',
  callId,
  purpose,
  scope: 'subtask-1',
  text,
});

function printer(isTTY = false) {
  let out = '';
  const p = new ProgressPrinter({ write: (text: string) => (out += text), isTTY });
  return { p, out: () => out };
}

describe('ProgressPrinter', () => {
  it("streams the agent's text on its own line per call, and leaves the planner's JSON to plan-created", () => {
    const { p, out } = printer();
    p.event(delta('c1', 'plan', '{"subtasks":'));
    p.event(delta('c2', 'execute', 'Looking up '));
    p.event(delta('c2', 'execute', 'prices.\nThen writing.'));
    p.event(delta('c3', 'execute', 'Done.'));
    p.event({
      ...base,
      type: 'subtask-start',
      index: 1,
      subtask: { id: 'subtask-2', title: 'Next', objective: 'o', expectedOutput: 'e' },
    });
    expect(out()).toBe('  💬 Looking up prices.\n     Then writing.\n  💬 Done.\n→ subtask-2: Next\n');
  });

  it('on a terminal, clears the spinner before every line and stops it when text streams', () => {
    const { p, out } = printer(true);
    p.event({
      ...base,
      type: 'llm-request',
      callId: 'c1',
      purpose: 'execute',
      scope: 'subtask-1',
      provider: 'x',
      modelId: 'm',
      messages: 2,
      requestTokens: 10,
    });
    p.event(delta('c1', 'execute', 'Hi'));
    p.close();
    expect(out()).toBe('\r\u001b[2K⠋ waiting for m (execute)\r\u001b[2K  💬 Hi\n');
  });
});
