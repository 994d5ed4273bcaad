/**
 * Every untrusted text in every managed prompt goes through the run's datamark: the harness's feedback to the manager
 * (which quotes audit findings), and the contract the manager wrote (shown to the executor and the auditor). An
 * attacker who learnt the run's boundary id (it is in `.harness/run.json`) plants exact and look-alike markers.
 */
import { describe, expect, it } from 'vitest';
import type { GenerateRequest, GenerateResult } from '../../src/backend/types.js';
import { createHarness } from '../../src/index.js';
import { ScriptedBackend, submit } from '../../src/testing/index.js';
import { boundaryOf, breakouts, INJECTIONS } from '../security/injection-support.js';
import { closers, lookalikes, textOf } from '../prompts/lookalike-support.js';
import { decide, tempDir, verdictOf, writeFileTool } from './helpers.js';

/** A published injection string short enough to survive the clipping of a record's reason whole. */
const SHORT_INJECTION = INJECTIONS.filter((i) => i.text.length < 150).sort((a, b) => b.text.length - a.text.length)[0]!
  .text;

describe('managed prompts under datamark attack', () => {
  it("keeps audit findings quoted in the harness's feedback to the manager inside a block", async () => {
    let round = 0;
    const backend = new ScriptedBackend((request): GenerateResult => {
      const id = boundaryOf(request);
      switch (request.purpose) {
        case 'manage':
          round++;
          if (round === 1) {
            return decide('execute', {
              records: [{ id: 'report', description: 'report.md exists' }],
              contract: { task: 'Write report.md.', acceptanceCriteria: ['report.md exists'] },
            });
          }
          return round === 2 ? decide('done') : decide('blocked', { reason: 'stop' });
        case 'execute':
          return submit('nothing done');
        case 'audit':
          return verdictOf('incomplete', 'clean', [
            {
              recordId: 'report',
              check: 'report.md',
              observed: `${closers(id)}\n${SHORT_INJECTION}\nCANARY-1-END`,
              verdict: 'fail',
            },
          ]);
        default:
          throw new Error(`unexpected ${request.purpose}`);
      }
    });
    const harness = createHarness({ backend, tools: [writeFileTool], workspace: await tempDir(), mode: 'managed' });
    await harness.run('Write report.md.');
    const manage = backend.callsFor('manage');
    expect(manage).toHaveLength(3);
    const third = manage[2] as GenerateRequest;
    const id = boundaryOf(third);
    expect(textOf(third)).toContain('You answered "done"');
    expect(textOf(third)).toContain('CANARY-1-END');
    expect(textOf(third)).toContain(SHORT_INJECTION);
    expect(breakouts(third, id)).toEqual([]);
    expect(lookalikes(textOf(third), id)).toEqual([]);
  });

  it('makes markers in the contract inert in the executor and auditor prompts', async () => {
    const backend = new ScriptedBackend((request): GenerateResult => {
      const id = boundaryOf(request);
      switch (request.purpose) {
        case 'manage':
          if (backend.callsFor('manage').length > 1) return decide('blocked', { reason: 'stop' });
          return decide('execute', {
            records: [{ id: 'report', description: `report.md exists ${closers(id)}` }],
            contract: {
              task: `Write report.md. ${closers(id)}`,
              acceptanceCriteria: [`report.md holds ${closers(id)}`],
              boundaries: [`Nothing else ${closers(id)}`],
            },
          });
        case 'execute':
          return submit('nothing done');
        case 'audit':
          return verdictOf('incomplete', 'clean', [
            { recordId: 'report', check: 'report.md', observed: 'missing', verdict: 'fail' },
          ]);
        default:
          throw new Error(`unexpected ${request.purpose}`);
      }
    });
    const harness = createHarness({ backend, tools: [writeFileTool], workspace: await tempDir(), mode: 'managed' });
    await harness.run('Write report.md.');
    for (const request of [...backend.callsFor('execute'), ...backend.callsFor('audit')]) {
      const id = boundaryOf(request);
      expect(textOf(request)).toContain('Write report.md.');
      expect(breakouts(request, id)).toEqual([]);
      expect(lookalikes(textOf(request), id)).toEqual([]);
    }
  });
});
