import { rm } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { GenerateRequest, GenerateResult, Message } from '../../../src/backend/types.js';
import { createHarness } from '../../../src/harness/harness.js';
import { submit, toolCall } from '../../../src/testing/replies.js';
import { ScriptedBackend } from '../../../src/testing/scripted-backend.js';
import { pythonInterpreterTool } from '../../../src/tools/builtin/python-interpreter.js';
import type { ToolOutput } from '../../../src/tools/types.js';
import { createTestContext } from './support/context.js';

const textOf = (output: ToolOutput): string => (typeof output === 'string' ? output : output.text);

function contentOf(message: Message): string {
  return typeof message.content === 'string'
    ? message.content
    : message.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

describe('python_interpreter sessions belong to one run instance', () => {
  it('two concurrent runs with the same runId do not share variables', async () => {
    // Each run sets `owner`, waits until the other run has set its own, then reads `owner` back.
    let setCount = 0;
    let bothSet!: () => void;
    const bothHaveSet = new Promise<void>((resolve) => (bothSet = resolve));
    const backend = new ScriptedBackend(async (request: GenerateRequest): Promise<GenerateResult> => {
      const task = contentOf(request.messages[1] as Message);
      const who = task.includes('run A') ? 'A' : 'B';
      const toolResults = request.messages.filter((m) => m.role === 'tool');
      if (toolResults.length === 0) return toolCall('python_interpreter', { code: `owner = ${JSON.stringify(who)}` });
      if (toolResults.length === 1) {
        setCount += 1;
        if (setCount === 2) bothSet();
        await bothHaveSet;
        return toolCall('python_interpreter', { code: 'owner' });
      }
      return submit(`${who} saw ${contentOf(toolResults[1] as Message)}`);
    });
    const harness = createHarness({
      backend,
      tools: [pythonInterpreterTool({ sandbox: 'none' })],
      decomposition: false,
      verification: false,
    });
    const [a, b] = await Promise.all([
      harness.run({ task: 'run A', runId: 'same' }),
      harness.run({ task: 'run B', runId: 'same' }),
    ]);
    try {
      expect(a.deliverable.answer).toMatch(/^A saw [\s\S]*--- result ---\n'A'/);
      expect(b.deliverable.answer).toMatch(/^B saw [\s\S]*--- result ---\n'B'/);
    } finally {
      await Promise.all(
        [a, b].map((result) => rm(result.workspace, { recursive: true, force: true }).catch(() => undefined)),
      );
    }
  });

  it('keys sessions by the loop identity (scopeKey), not by runId and scope', async () => {
    const one = await createTestContext('subtask-1', 'same');
    const two = await createTestContext('subtask-1', 'same');
    const python = pythonInterpreterTool({ sandbox: 'none' });
    const loopOne = {};
    try {
      // The registry hands every call a fresh context object; the loop's scopeKey is what stays the same.
      await python.execute({ code: 'owner = "one"' }, { ...one.ctx, scopeKey: loopOne });
      expect(textOf(await python.execute({ code: 'owner' }, { ...one.ctx, scopeKey: loopOne }))).toBe(
        "--- result ---\n'one'",
      );
      expect(textOf(await python.execute({ code: 'owner' }, { ...two.ctx, scopeKey: {} }))).toContain(
        "NameError: name 'owner' is not defined",
      );
    } finally {
      await one.dispose();
      await two.dispose();
    }
  });
});
