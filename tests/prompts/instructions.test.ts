import { describe, expect, it } from 'vitest';
import {
  AUDITOR_PROMPT,
  createHarness,
  DEFAULT_PROMPTS,
  EXECUTOR_SYSTEM_PROMPT,
  MANAGER_PROMPT,
  PLANNER_PROMPT,
  REPAIRER_PROMPT,
  SYNTHESIZER_PROMPT,
  VERIFIER_PROMPT,
  type Purpose,
} from '../../src/index.js';
import { ScriptedBackend, planOf, submit, toolCall, verdict } from '../../src/testing/index.js';
import { decide, executeRecords, tempDir, verdictOf, writeFileTool } from '../managed/helpers.js';
import { textOf } from '../harness/helpers.js';

const TASK = 'Write owls.md about owls.';
const PIPELINE_ROLES = ['plan', 'execute', 'synthesize', 'verify', 'repair'] as const;

/** A full pipeline run: plan, two subtasks, synthesis, a failed verification, one repair, a passed verification. */
function pipelineBackend(): ScriptedBackend {
  return new ScriptedBackend({
    plan: [planOf('Collect owl facts', 'Write owls.md')],
    execute: [submit('facts'), submit('wrote owls.md')],
    synthesize: [submit('owls.md')],
    verify: [verdict(false, ['too short']), verdict(true)],
    repair: [submit('owls.md, longer')],
  });
}

/** Marker text per role, so a request shows which roles' instructions it carries. */
const marker = (role: string) => `Always answer as ACME-${role.toUpperCase()}.`;

function texts(backend: ScriptedBackend, role: Purpose): string[] {
  return backend.callsFor(role).map(textOf);
}

describe('instructions', () => {
  it('per role: every request of a named role carries its text, no other role carries it', async () => {
    for (const named of PIPELINE_ROLES) {
      const backend = pipelineBackend();
      const harness = createHarness({ backend, workspace: await tempDir(), instructions: { [named]: marker(named) } });
      const result = await harness.run(TASK);
      expect(result.status).toBe('succeeded');
      for (const role of PIPELINE_ROLES) {
        const sent = texts(backend, role);
        expect(sent.length, role).toBeGreaterThan(0);
        for (const text of sent)
          expect(text.includes(marker(named)), `${role} request, ${named} named`).toBe(role === named);
      }
    }
  });

  it('a string goes to every role, after the built-in prompt, which stays whole', async () => {
    const backend = pipelineBackend();
    const harness = createHarness({ backend, workspace: await tempDir(), instructions: 'Write in British English.' });
    await harness.run(TASK);
    for (const role of PIPELINE_ROLES)
      for (const text of texts(backend, role)) expect(text).toContain('British English');
    const verifySystem = String(backend.callsFor('verify')[0]?.messages[0]?.content);
    expect(verifySystem.startsWith(VERIFIER_PROMPT)).toBe(true);
    expect(verifySystem.indexOf('Write in British English.')).toBeGreaterThan(VERIFIER_PROMPT.length);
  });

  it('is appended to a prompts.* override too, never replacing it', async () => {
    const backend = pipelineBackend();
    const harness = createHarness({
      backend,
      workspace: await tempDir(),
      prompts: { verify: 'You check owl reports. Reply with JSON {"passed": boolean, "defects": []}.' },
      instructions: { verify: 'Be strict about sources.' },
    });
    await harness.run(TASK);
    const system = String(backend.callsFor('verify')[0]?.messages[0]?.content);
    expect(system).toContain('You check owl reports.');
    expect(system).toContain('Be strict about sources.');
    expect(system).not.toContain(VERIFIER_PROMPT.slice(0, 60));
  });

  it("managed mode: the manager's, the auditor's and the executor's requests carry their own only", async () => {
    const report = { id: 'report', description: 'report.md exists' };
    const backend = new ScriptedBackend({
      manage: [executeRecords([report]), decide('done')],
      execute: [toolCall('write_file', { path: 'report.md', content: '# R' }), submit('Wrote report.md.')],
      audit: [
        verdictOf('complete', 'clean', [
          { recordId: 'report', check: 'report.md exists', observed: '# R', verdict: 'pass' },
        ]),
      ],
      verify: [verdict(true)],
    });
    const harness = createHarness({
      backend,
      tools: [writeFileTool],
      workspace: await tempDir(),
      mode: 'managed',
      instructions: { manage: marker('manage'), audit: marker('audit'), execute: marker('execute') },
    });
    const result = await harness.run('Write report.md.');
    expect(result.status, JSON.stringify(result.error)).toBe('succeeded');
    for (const role of ['manage', 'audit', 'execute', 'verify'] as const) {
      const sent = texts(backend, role);
      expect(sent.length, role).toBeGreaterThan(0);
      for (const text of sent)
        for (const named of ['manage', 'audit', 'execute'])
          expect(text.includes(marker(named)), `${role} request, ${named} instructions`).toBe(role === named);
    }
  });

  it('keeps the ablation fair: with the same instructions, DECOMP and FULL send the same plan request', async () => {
    const planRequest = async (verification: boolean) => {
      const backend = pipelineBackend();
      const ids = ['run-1'];
      await createHarness({
        backend,
        verification,
        workspace: await tempDir(),
        instructions: 'Cite a source for every fact.',
        generateId: () => ids[0] as string,
      }).run(TASK);
      // The run's random data mark made the same for both runs, as the ablation tests do.
      return backend.callsFor('plan').map((request) => textOf(request).replace(/data-[0-9a-f]{16}/g, 'data-MARK'));
    };
    const [decomp, full] = [await planRequest(false), await planRequest(true)];
    expect(JSON.stringify(decomp)).toContain('Cite a source for every fact.');
    expect(decomp).toEqual(full);
  });

  it('rejects an unknown role, naming it', () => {
    const backend = new ScriptedBackend([]);
    expect(() => createHarness({ backend, instructions: { planner: 'x' } as never })).toThrow(/instructions\.planner/);
  });
});

describe('DEFAULT_PROMPTS', () => {
  it('holds the built-in prompt of every role', () => {
    expect(DEFAULT_PROMPTS).toEqual({
      plan: PLANNER_PROMPT,
      execute: EXECUTOR_SYSTEM_PROMPT,
      synthesize: SYNTHESIZER_PROMPT,
      verify: VERIFIER_PROMPT,
      repair: REPAIRER_PROMPT,
      manage: MANAGER_PROMPT,
      audit: AUDITOR_PROMPT,
    });
    expect(Object.isFrozen(DEFAULT_PROMPTS)).toBe(true);
  });
});
