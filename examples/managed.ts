/**
 * Managed mode (LongHorizon-Harness) offline: a manager keeps an audited task state, an executor works in a fresh
 * context each round, a read-only auditor checks the workspace, and only audits complete records; before the run
 * succeeds, a final verification checks the deliverable against the request. The replayed executor claims work it did
 * not do in round 1; the audit catches it.
 *
 *   npm run example:managed
 */
import { createHarness, readFileTool, writeToFileTool, type ManagedRunReport } from 'horizon-harness';
import { ScriptedBackend, reply, submit, toolCall, toolCalls } from 'horizon-harness/testing';

const task =
  'Prepare release 1.2.0: add a "## 1.2.0" section to CHANGELOG.md listing the two fixes (empty input crash, ' +
  'slow startup) and set the VERSION file to 1.2.0.';

const records = [
  { id: 'changelog', description: 'CHANGELOG.md has a "## 1.2.0" section listing both fixes.' },
  { id: 'version', description: 'VERSION contains exactly "1.2.0".' },
];
const json = (value: unknown) => reply(JSON.stringify(value));
const verdict = (value: unknown) => submit(JSON.stringify(value));

// What the three roles would answer, in order. Each audit reads the files itself before it judges.
const backend = new ScriptedBackend({
  manage: [
    json({
      records,
      next: 'execute',
      contract: {
        task: 'Write the 1.2.0 changelog section and bump VERSION.',
        acceptanceCriteria: records.map((r) => r.description),
        boundaries: ['Do not touch any other file.'],
      },
    }),
    json({
      records: [],
      next: 'execute',
      contract: {
        task: 'Set VERSION to 1.2.0 (the audit found it missing); leave CHANGELOG.md as it is.',
        acceptanceCriteria: records.map((r) => r.description),
        boundaries: ['Do not touch any other file.'],
        recordIds: ['changelog', 'version'],
      },
    }),
    json({
      records: [],
      next: 'done',
      answer: 'Release 1.2.0 is prepared: CHANGELOG.md lists both fixes under "## 1.2.0" and VERSION is 1.2.0.',
    }),
  ],
  execute: [
    toolCall('write_to_file', {
      path: 'CHANGELOG.md',
      content: '# Changelog\n\n## 1.2.0\n- Fix crash on empty input\n- Faster startup\n',
    }),
    // The false claim: VERSION was never written.
    submit('Updated CHANGELOG.md and set VERSION to 1.2.0. Everything is done.', ['CHANGELOG.md', 'VERSION']),
    toolCall('write_to_file', { path: 'VERSION', content: '1.2.0\n' }),
    submit('Wrote VERSION.', ['VERSION']),
  ],
  audit: [
    toolCall('list_files', {}),
    toolCalls([
      { name: 'read_file', args: { path: 'CHANGELOG.md' } },
      { name: 'read_file', args: { path: 'VERSION' } },
    ]),
    verdict({
      status: 'incomplete',
      integrity: 'clean',
      findings: [
        {
          recordId: 'changelog',
          check: 'CHANGELOG.md has "## 1.2.0" with both fixes',
          observed: 'CHANGELOG.md: "## 1.2.0 / - Fix crash on empty input / - Faster startup"',
          verdict: 'pass',
        },
        {
          recordId: 'version',
          check: 'VERSION contains "1.2.0"',
          observed: 'read_file: "VERSION" does not exist in the workspace',
          verdict: 'fail',
        },
      ],
    }),
    toolCalls([
      { name: 'read_file', args: { path: 'CHANGELOG.md' } },
      { name: 'read_file', args: { path: 'VERSION' } },
    ]),
    verdict({
      status: 'complete',
      integrity: 'clean',
      findings: [
        {
          recordId: 'changelog',
          check: 'CHANGELOG.md has "## 1.2.0" with both fixes',
          observed: 'unchanged since round 1: both fixes listed',
          verdict: 'pass',
        },
        { recordId: 'version', check: 'VERSION contains "1.2.0"', observed: 'VERSION: "1.2.0"', verdict: 'pass' },
      ],
    }),
  ],
  // The final verification: the manager's answer and the produced files, judged against the request.
  verify: [json({ passed: true, defects: [] })],
});

const harness = createHarness({
  backend,
  tools: [writeToFileTool(), readFileTool()],
  mode: 'managed',
  managed: { maxRounds: 6 },
});

harness.on('manager-decision', (e) => {
  console.log(`\n── round ${e.round}: manager → ${e.next}${e.fallback ? ` (${e.fallback})` : ''}`);
  for (const r of e.records) console.log(`   + record ${r.id}: ${r.description}`);
  if (e.contract) console.log(`   contract: ${e.contract.task} [records: ${e.contract.recordIds.join(', ')}]`);
});
harness.on('tool-call', (e) => {
  if (e.toolName === 'submit_answer' && e.purpose === 'execute') {
    console.log(`   executor claims: ${(JSON.parse(e.arguments) as { answer: string }).answer}`);
  } else if (e.toolName !== 'submit_answer') {
    console.log(`   ${e.purpose === 'audit' ? '🔍 auditor' : '🔧 executor'} ${e.toolName} ${e.arguments}`);
  }
});
harness.on('audit-finish', (e) => {
  console.log(`   audit: ${e.status}, integrity ${e.integrity}`);
  for (const f of e.findings)
    console.log(`     ${f.verdict === 'pass' ? '✓' : '✗'} [${f.recordId ?? 'no record'}] ${f.check} — ${f.observed}`);
  const caught = e.findings.filter((f) => f.verdict === 'fail');
  if (caught.length)
    console.log(
      `   ⚠ caught: the executor's claim does not hold (${caught.map((f) => f.recordId).join(', ')}); nothing is completed`,
    );
});
harness.on('verify-finish', (e) =>
  console.log(
    `\n── final verification ${e.attempt}: ${e.passed ? 'passed' : `${e.verdict.status} (${e.defects.length} defect(s))`}`,
  ),
);
harness.on('integrity-violation', (e) =>
  console.log(`   ⛔ the workspace changed during the audit: ${e.changedPaths.join(', ')}`),
);

const result = await harness.run(task);
const report = result.report as ManagedRunReport;

console.log(`\n■ ${result.status}${result.error ? `: ${result.error.message}` : ''}`);
console.log('\nFinal task state:');
for (const r of result.taskState?.records ?? []) {
  console.log(`  [${r.status}] ${r.id}: ${r.description}`);
  for (const e of r.evidence) console.log(`      round ${e.round} ${e.audit} ${e.verdict}: ${e.observed}`);
}
console.log(`\nFiles: ${result.deliverable.files.join(', ')} (in ${result.workspace})`);
console.log('\nManaged report:');
console.log(JSON.stringify(report.managed, null, 2));
