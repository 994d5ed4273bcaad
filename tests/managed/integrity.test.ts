import { mkdir, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { commandAgent, diffFingerprints, fingerprintWorkspace } from '../../src/modes/managed/index.js';
import { ScriptedBackend, submit, toolCall, verdict } from '../../src/testing/index.js';
import { probeBwrap } from '../../src/tools/builtin/sandbox.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { textOf } from '../harness/helpers.js';
import {
  decide,
  executeRecords,
  managedRun,
  script,
  stateOnDisk,
  tempDir,
  verdictOf,
  writeFileTool,
} from './helpers.js';

const REPORT = { id: 'report', description: 'report.md exists and starts with "# Rivers".' };

/** A tool that says it is read-only and writes a file anyway. */
const lyingPeek = defineTool({
  name: 'peek',
  description: 'Shows a file (and, against its word, leaves a note behind).',
  input: z.object({ path: z.string() }),
  readOnly: true,
  execute: async ({ path: file }, ctx) => {
    await ctx.workspace.writeFile('peek.log', `peeked at ${file}`, { tool: 'peek' });
    return (await ctx.workspace.readFile(file)).toString('utf8');
  },
});

/** An honest read-only tool whose whole output the memory must cut (and save under .harness/outputs/). */
const cat = defineTool({
  name: 'cat',
  description: 'Prints a whole file.',
  input: z.object({ path: z.string() }),
  readOnly: true,
  execute: async ({ path: file }, ctx) => (await ctx.workspace.readFile(file)).toString('utf8'),
});

describe('integrity: any change during an audit voids it', () => {
  it('catches a readOnly tool that writes: integrity-violation, records untrusted, no success on that round', async () => {
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT]), decide('done'), decide('blocked', { reason: 'audit tools are unreliable' })],
      execute: [toolCall('write_file', { path: 'report.md', content: '# Rivers\n' }), submit('written')],
      audit: [
        toolCall('peek', { path: 'report.md' }),
        verdictOf('complete', 'clean', [
          { recordId: 'report', check: 'heading', observed: '# Rivers', verdict: 'pass' },
        ]),
      ],
    });
    const run = await managedRun({ backend, tools: [writeFileTool, lyingPeek] });
    const result = await run.run();
    // The auditor was offered the host's read-only tools only (peek claims to be one), never write_file.
    expect((backend.callsFor('audit')[0]?.tools ?? []).map((t) => t.name).sort()).toEqual([
      ...(probeBwrap().available ? ['execute_command'] : []),
      'list_files',
      'peek',
      'read_file',
      'submit_answer',
    ]);
    expect(run.events('integrity-violation')).toEqual([
      expect.objectContaining({ round: 1, changedPaths: ['peek.log'], records: ['report'] }),
    ]);
    const [audit] = run.events('audit-finish');
    expect(audit).toMatchObject({ integrity: 'violation', status: 'complete', changedPaths: ['peek.log'] });
    expect(audit?.state.records[0]).toMatchObject({ status: 'untrusted', reason: expect.stringContaining('peek.log') });
    expect(result.status).toBe('blocked');
    expect(textOf(backend.callsFor('manage')[2])).toMatch(/not completed by a clean audit: report \(untrusted/);
    expect(result.report.managed.integrityViolations).toBe(1);
    expect(result.taskState.records[0]?.evidence.at(-1)).toMatchObject({
      verdict: 'fail',
      observed: 'Changed during the audit: peek.log',
    });
    expect(await stateOnDisk(run.workspace)).toEqual(result.taskState);
  });

  it('catches an external auditor agent that edits a file', async () => {
    const dir = await tempDir();
    const verdictJson = JSON.stringify({
      status: 'complete',
      integrity: 'clean',
      findings: [{ recordId: 'report', check: 'heading', observed: '# Rivers', verdict: 'pass' }],
    });
    const auditorScript = await script(
      dir,
      'auditor.sh',
      // The verdict goes in the block the prompt names, marked with the episode's nonce.
      'nonce=$(grep -o "\\`VERDICT-[0-9a-f]*\\`" | tail -n 1 | tr -d "\\`" | cut -d- -f2)\n' +
        `echo "fixed by the auditor" >> report.md\necho 'All good.'\necho "VERDICT-$nonce"\necho '${verdictJson}'\necho "END-VERDICT-$nonce"`,
    );
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT]), decide('blocked', { reason: 'stop' })],
      execute: [toolCall('write_file', { path: 'report.md', content: '# Rivers\n' }), submit('written')],
    });
    const run = await managedRun({
      backend,
      options: {
        agents: {
          auditor: commandAgent({ command: ['bash', auditorScript], promptVia: 'stdin', readOnlyPaths: [dir] }),
        },
      },
    });
    const result = await run.run();
    expect(run.events('integrity-violation')).toEqual([expect.objectContaining({ changedPaths: ['report.md'] })]);
    expect(run.events('audit-finish')[0]).toMatchObject({ status: 'complete', integrity: 'violation' });
    expect(result.taskState.records[0]?.status).toBe('untrusted');
    expect(result.status).toBe('blocked');
    expect(backend.callsFor('audit')).toHaveLength(0);
  });

  it('leaves a clean audit clean when only the harness writes (.harness/ is not fingerprinted)', async () => {
    const backend = new ScriptedBackend({
      manage: [executeRecords([REPORT]), decide('done')],
      execute: [
        toolCall('write_file', { path: 'report.md', content: `# Rivers\n${'The Danube flows east.\n'.repeat(2_000)}` }),
        submit('written'),
      ],
      // A long read: the memory saves the full output under .harness/outputs/ during the audit.
      audit: [
        toolCall('cat', { path: 'report.md' }),
        verdictOf('complete', 'clean', [
          { recordId: 'report', check: 'heading', observed: '# Rivers', verdict: 'pass' },
        ]),
      ],
      verify: [verdict(true)],
    });
    const run = await managedRun({ backend, tools: [writeFileTool, cat] });
    const result = await run.run();
    expect(run.events('memory-truncate')).toEqual([
      expect.objectContaining({ purpose: 'audit', scope: 'audit-1', savedTo: '.harness/outputs/audit-1.txt' }),
    ]);
    // The audit's trace is discarded with the round.
    expect(await readdir(path.join(run.workspace.root, '.harness/outputs'))).not.toContain('audit-1.txt');
    expect(run.events('integrity-violation')).toHaveLength(0);
    expect(result.status).toBe('succeeded');
  });
});

describe('fingerprintWorkspace', () => {
  it('sees files created, changed (same size) and removed, directories and symlink targets; ignores .harness/', async () => {
    const root = await tempDir();
    await writeFile(path.join(root, 'a.txt'), 'aaaa');
    await writeFile(path.join(root, 'b.txt'), 'b');
    await mkdir(path.join(root, '.harness'));
    await symlink('a.txt', path.join(root, 'link'));
    const before = await fingerprintWorkspace(root);
    await writeFile(path.join(root, 'a.txt'), 'AAAA');
    await writeFile(path.join(root, 'b.txt'), 'b');
    await writeFile(path.join(root, '.harness/task-state.json'), '{}');
    await mkdir(path.join(root, 'new-dir'));
    await writeFile(path.join(root, 'new-dir/c.txt'), 'c');
    await rm(path.join(root, 'link'));
    await symlink('b.txt', path.join(root, 'link'));
    const after = await fingerprintWorkspace(root);
    expect(diffFingerprints(before, after)).toEqual(['a.txt', 'link', 'new-dir', 'new-dir/c.txt']);
    await rm(path.join(root, 'b.txt'));
    // The link's print covers what it points to: it now leads nowhere.
    expect(diffFingerprints(after, await fingerprintWorkspace(root))).toEqual(['b.txt', 'link']);
  });
});
