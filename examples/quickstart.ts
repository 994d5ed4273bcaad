/**
 * Quickstart: one request → plan → subtasks → synthesis → verification (→ repair) → a deliverable file.
 *
 *   npm run demo
 *
 * With OPENAI_API_KEY (+ OPENAI_BASE_URL, HARNESS_MODEL) or ANTHROPIC_API_KEY set it uses that model;
 * without, it replays a recorded-style agent offline.
 */
import { createHarness, type LlmBackend } from 'horizon-harness';
import { DEMO_SCENARIO, replayBackend } from 'horizon-harness/testing';
import { backendFromEnv } from './support/backend-from-env.js';
import { demoTools } from './support/demo-tools.js';

/** The request: replace it with your own. */
const TASK =
  'Plan a relaxed 3-day trip to Lisbon for two people in spring. Write itinerary.md with three sections: ' +
  '"Day by day" (morning/afternoon/evening), "Budget" (a table in euros) and "Packing list".';

const live = backendFromEnv();
let backend: LlmBackend;
if (live) {
  console.log(`Using live backend: ${live.label}`);
  backend = live.backend;
} else {
  console.log(
    'No OPENAI_API_KEY or ANTHROPIC_API_KEY set: running on the built-in replay backend (offline, scripted answers).',
  );
  backend = replayBackend(DEMO_SCENARIO);
}

const harness = createHarness({ backend, tools: demoTools() });

harness.on('run-start', (e) => {
  console.log(`\n▶ run ${e.runId}\n  workspace: ${e.workspace}`);
  for (const warning of e.warnings) console.log(`  ⚠ ${warning}`);
});
harness.on('plan-created', (e) => {
  console.log(
    `\n📋 plan (${e.plan.length} subtask${e.plan.length === 1 ? '' : 's'}${e.fallback ? `, ${e.fallback}` : ''})`,
  );
  for (const s of e.plan) console.log(`   ${s.id}: ${s.title}`);
});
harness.on('subtask-start', (e) => console.log(`\n→ ${e.subtask.id}: ${e.subtask.title}`));
harness.on('tool-call', (e) => {
  if (e.toolName !== 'submit_answer')
    console.log(`   🔧 ${e.toolName} ${e.arguments.slice(0, 80)}${e.arguments.length > 80 ? '…' : ''}`);
});
harness.on('subtask-finish', (e) =>
  console.log(`   ${e.record.status === 'completed' ? '✓' : '✗'} ${e.record.answer.slice(0, 100)}`),
);
harness.on('synthesis-finish', (e) =>
  console.log(`\n🧩 synthesis ${e.status}: files ${e.deliverable.files.join(', ') || '(none)'}`),
);
harness.on('verify-finish', (e) => {
  console.log(`\n🔍 verification ${e.attempt}: ${e.verdict.status}`);
  for (const d of e.defects) console.log(`   - ${d.description}`);
});
harness.on('repair-start', (e) =>
  console.log(`\n🛠  repair ${e.attempt} (${e.defects.length} defect${e.defects.length === 1 ? '' : 's'})`),
);
harness.on('repair-finish', (e) => console.log(`   repair ${e.attempt} ${e.status}`));

const result = await harness.run(TASK);

console.log(`\n■ ${result.status}${result.error ? `: ${result.error.message}` : ''}`);
console.log(`\nAnswer:\n${result.deliverable.answer}`);
for (const file of result.deliverable.files) console.log(`Deliverable: ${result.workspace}/${file}`);
console.log('\nReport:');
console.log(JSON.stringify(result.report, null, 2));
