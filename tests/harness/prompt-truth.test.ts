import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { GenerateRequest } from '../../src/backend/types.js';
import { createHarness } from '../../src/harness/harness.js';
import { planOf, submit, verdict } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { executeCommandTool } from '../../src/tools/builtin/execute-command.js';
import { defineTool } from '../../src/tools/define-tool.js';
import type { Tool } from '../../src/tools/types.js';
import { tempDir, writeFile } from './helpers.js';

const TASK = 'Count the lines of notes.txt.';

function systemOf(request: GenerateRequest | undefined): string {
  const system = request?.messages[0];
  return system?.role === 'system' ? system.content : '';
}

function userOf(request: GenerateRequest | undefined): string {
  const user = request?.messages.find((m) => m.role === 'user');
  return typeof user?.content === 'string' ? user.content : '';
}

async function executeSystemPrompt(tools: Tool[]): Promise<string> {
  const backend = new ScriptedBackend({ execute: [submit('3 lines')] });
  await createHarness({ backend, tools, workspace: await tempDir(), decomposition: false, verification: false }).run(
    TASK,
  );
  return systemOf(backend.callsFor('execute')[0]);
}

describe('every prompt sentence is true of its run: the executor and the sandbox', () => {
  it('says shell commands run on the host, not in a sandbox, with sandbox: none', async () => {
    const shell = executeCommandTool({ sandbox: 'none' });
    const system = await executeSystemPrompt([shell]);
    expect(system).not.toContain('sandboxed workspace');
    expect(system).toContain(
      'Programs you run with execute_command execute directly on this machine, not in a sandbox',
    );
    expect(system).not.toContain('execute in a sandbox');
  });

  it('says nothing of a sandbox when the run has only custom tools', async () => {
    const system = await executeSystemPrompt([writeFile]);
    expect(system).not.toMatch(/sandbox/i);
  });

  it('says programs run in a sandbox exactly when the tool reports one', async () => {
    const shell = executeCommandTool({ sandbox: 'auto', approve: async () => true });
    const sandboxedCode = defineTool({
      name: 'run_code',
      description: 'Runs code in a jail of its own.',
      input: z.object({ code: z.string() }),
      sandbox: { active: true },
      execute: () => 'ran',
    });
    const system = await executeSystemPrompt([shell, sandboxedCode]);
    if (shell.sandbox.active) {
      expect(system).toContain('Programs you run with execute_command and run_code execute in a sandbox');
      expect(system).not.toContain('not in a sandbox');
    } else {
      expect(system).toContain('Programs you run with run_code execute in a sandbox');
      expect(system).toContain('Programs you run with execute_command execute directly on this machine');
    }
  });
});

describe('every prompt sentence is true of its run: synthesis and planning', () => {
  it('tells synthesis about failed subtasks only when some failed', async () => {
    const backend = new ScriptedBackend({
      plan: [planOf('Count', 'Report')],
      execute: [submit('3 lines'), submit('Three lines.')],
      synthesize: [submit('notes.txt has 3 lines.')],
    });
    await createHarness({ backend, workspace: await tempDir(), verification: false }).run(TASK);
    const objective = userOf(backend.callsFor('synthesize')[0]);
    expect(objective).not.toContain('failed');
    expect(objective).not.toContain('Fill those gaps');
  });

  it('names the failed subtasks to synthesis when some failed', async () => {
    const backend = new ScriptedBackend({
      plan: [planOf('Count', 'Report')],
      execute: [submit('3 lines'), new Error('refused'), new Error('refused')],
      synthesize: [submit('notes.txt has 3 lines; the report is missing.')],
    });
    await createHarness({ backend, workspace: await tempDir(), verification: false }).run(TASK);
    const objective = userOf(backend.callsFor('synthesize')[0]);
    expect(objective).toContain('1 subtask(s) failed: subtask-2 "Report". Fill those gaps yourself');
  });

  it("tells the planner the run's tools, that subtasks run in parallel only when they do, and nothing of verification", async () => {
    const run = async (options: { verification: boolean; maxParallelSubtasks: number }) => {
      const backend = new ScriptedBackend({
        plan: [planOf('Count')],
        execute: [submit('3 lines')],
        ...(options.verification ? { verify: [verdict(true)] } : {}),
      });
      await createHarness({
        backend,
        tools: [writeFile],
        workspace: await tempDir(),
        verification: options.verification,
        limits: { maxParallelSubtasks: options.maxParallelSubtasks },
      }).run(TASK);
      return systemOf(backend.callsFor('plan')[0]);
    };
    const sequential = await run({ verification: false, maxParallelSubtasks: 1 });
    expect(sequential).toContain('one agent with the tools write_file can finish');
    expect(sequential).not.toContain('web search');
    expect(sequential).not.toContain('verifies');
    expect(sequential).not.toContain('may run at the same time');
    expect(sequential).toContain('Subtasks run one at a time, in plan order');

    const parallel = await run({ verification: true, maxParallelSubtasks: 2 });
    expect(parallel).toContain('may run at the same time');
    // Verification is an ablation's switch: the plan request must not differ with it, so it says nothing of it.
    expect(parallel).not.toContain('verifies');
    const unmarked = (prompt: string) => prompt.replace(/data-[0-9a-f]+/g, 'data-…');
    expect(unmarked(await run({ verification: true, maxParallelSubtasks: 1 }))).toBe(unmarked(sequential));
  });
});
