import { existsSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandAgent, diffFingerprints, fingerprintWorkspace, functionAgent } from '../../src/modes/managed/index.js';
import { changedNow, citedPaths, escapingLinks } from '../../src/modes/managed/integrity.js';
import { ScriptedBackend, toolCall } from '../../src/testing/index.js';
import { probeBwrap } from '../../src/tools/builtin/sandbox.js';
import { decide, executeRecords, managedRun, script, tempDir, verdictOf } from './helpers.js';

const VERSION = { id: 'version', description: 'VERSION holds 1.2.0.' };

/** An auditor that reads VERSION with its read-only tool and passes the record when it shows 1.2.0. */
function readingAuditor() {
  return [
    toolCall('read_file', { path: 'VERSION' }),
    verdictOf('complete', 'clean', [
      { recordId: 'version', check: 'VERSION holds 1.2.0', observed: 'VERSION holds 1.2.0', verdict: 'pass' },
    ]),
  ];
}

describe('links that hide content from the audit', () => {
  it('a link into .harness/ makes the round suspect: the record is untrusted, never completed', async () => {
    const backend = new ScriptedBackend({
      manage: [executeRecords([VERSION]), decide('done'), decide('blocked', { reason: 'VERSION cannot be trusted' })],
      audit: readingAuditor(),
    });
    const executor = functionAgent(async ({ cwd }) => {
      await symlink('.harness/v', path.join(cwd, 'VERSION'));
      return { status: 'done', output: 'VERSION is 1.2.0' };
    });
    const run = await managedRun({ backend, options: { finalVerification: false, agents: { executor } } });
    // What the link shows sits in the harness's folder, which the workspace fingerprint does not watch.
    await mkdir(path.join(run.workspace.root, '.harness'), { recursive: true });
    await writeFile(path.join(run.workspace.root, '.harness/v'), '1.2.0\n');
    const result = await run.run();
    const [audit] = run.events('audit-finish');
    expect(audit).toMatchObject({ integrity: 'suspect', changedPaths: [] });
    expect(audit?.findings.at(-1)).toMatchObject({
      verdict: 'fail',
      observed: expect.stringContaining('VERSION -> .harness/v'),
    });
    expect(result.taskState.records[0]).toMatchObject({
      status: 'untrusted',
      reason: expect.stringContaining('VERSION -> .harness/v'),
    });
    expect(result.status).toBe('blocked');
  });

  it('fingerprints what a link points to, and names links that leave the workspace or enter .harness/', async () => {
    const root = await tempDir();
    const outside = await tempDir();
    await mkdir(path.join(root, '.harness'));
    await writeFile(path.join(root, '.harness/v'), '1.0.0');
    await writeFile(path.join(outside, 'secret.txt'), 'x');
    await writeFile(path.join(root, 'real.txt'), 'r');
    await symlink('.harness/v', path.join(root, 'VERSION'));
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'away'));
    await symlink('real.txt', path.join(root, 'near'));
    const before = await fingerprintWorkspace(root);
    expect(escapingLinks(before)).toEqual(['VERSION -> .harness/v', `away -> ${path.join(outside, 'secret.txt')}`]);
    // A change behind the link is a change of the link.
    await writeFile(path.join(root, '.harness/v'), '1.2.0');
    await writeFile(path.join(outside, 'secret.txt'), 'y');
    expect(diffFingerprints(before, await fingerprintWorkspace(root))).toEqual(['VERSION', 'away']);
  });
});

describe('nothing but the harness changes .harness/ during a round', () => {
  it('an executor that writes into .harness/ is an integrity violation: records untrusted, the paths named', async () => {
    const backend = new ScriptedBackend({
      manage: [executeRecords([VERSION]), decide('done'), decide('blocked', { reason: 'the state was forged' })],
      audit: readingAuditor(),
    });
    const executor = functionAgent(async ({ cwd }) => {
      await writeFile(path.join(cwd, 'VERSION'), '1.2.0\n');
      // A forged copy of the task state, claiming the record is done.
      await writeFile(
        path.join(cwd, '.harness/task-state.json'),
        JSON.stringify({ round: 1, records: [{ ...VERSION, status: 'completed', evidence: [] }] }),
      );
      return { status: 'done', output: 'done' };
    });
    const run = await managedRun({ backend, options: { finalVerification: false, agents: { executor } } });
    const result = await run.run();
    expect(run.events('integrity-violation')).toEqual([
      expect.objectContaining({ round: 1, changedPaths: ['.harness/task-state.json'], records: ['version'] }),
    ]);
    const [audit] = run.events('audit-finish');
    expect(audit).toMatchObject({ integrity: 'violation', changedPaths: [] });
    expect(result.taskState.records[0]).toMatchObject({
      status: 'untrusted',
      reason: expect.stringContaining('.harness/task-state.json'),
    });
    expect(result.status).toBe('blocked');
    expect(result.report.managed.integrityViolations).toBe(1);
  });

  it.runIf(probeBwrap().available)(
    'a sandboxed commandAgent (the default) cannot write .harness/; on the host (sandbox: false) it is warned of',
    async () => {
      const dir = await tempDir();
      const file = await script(
        dir,
        'forger.sh',
        'cat > /dev/null\necho 1.2.0 > VERSION\necho forged > .harness/run.json || echo "refused"',
      );
      const backend = new ScriptedBackend({
        manage: [executeRecords([VERSION]), decide('blocked', { reason: 'stop' })],
        audit: [
          verdictOf('complete', 'clean', [
            { recordId: 'version', check: 'VERSION holds 1.2.0', observed: 'VERSION holds 1.2.0', verdict: 'pass' },
          ]),
        ],
      });
      const executor = commandAgent({ command: ['bash', file], promptVia: 'stdin', readOnlyPaths: [dir] });
      const run = await managedRun({ backend, options: { finalVerification: false, agents: { executor } } });
      const result = await run.run();
      expect(run.events('integrity-violation')).toEqual([]);
      expect(result.taskState.records[0]?.status).toBe('completed');
      expect(existsSync(path.join(run.workspace.root, '.harness/run.json'))).toBe(false);
      expect(run.events('run-start')[0]?.warnings).toEqual([]);

      const onHost = commandAgent({ command: ['bash', file], promptVia: 'stdin', sandbox: false, name: 'forger' });
      const hostRun = await managedRun({
        backend: new ScriptedBackend({
          manage: [executeRecords([VERSION]), decide('blocked', { reason: 'stop' })],
          audit: readingAuditor(),
        }),
        options: { finalVerification: false, agents: { executor: onHost } },
      });
      const hostResult = await hostRun.run();
      expect(hostRun.events('run-start')[0]?.warnings).toEqual([
        expect.stringMatching(/^forger: commandAgent runs on the host \(sandbox: false\)/),
      ]);
      expect(hostRun.events('integrity-violation')[0]?.changedPaths).toEqual(['.harness/run.json']);
      expect(hostResult.taskState.records[0]?.status).toBe('untrusted');
    },
  );
});

describe('files an audit finding cites', () => {
  it('are the workspace paths a finding names on their own, and are checked against the fingerprint again', async () => {
    const root = await tempDir();
    await writeFile(path.join(root, 'VERSION'), '1.0.0');
    await writeFile(path.join(root, 'VERSIONS'), 'x');
    await writeFile(path.join(root, 'report.md'), 'r');
    const before = await fingerprintWorkspace(root);
    expect(citedPaths(['VERSION holds 1.2.0.', 'See report.md.'], before)).toEqual(['VERSION', 'report.md']);
    expect(citedPaths(['the VERSIONS file', 'notes/report.md.bak'], before)).toEqual(['VERSIONS']);
    await writeFile(path.join(root, 'VERSION'), '1.2.0');
    expect(await changedNow(root, ['VERSION', 'report.md'], before)).toEqual(['VERSION']);
  });
});
