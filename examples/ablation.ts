/**
 * Ablation: the paper's four configurations (DIRECT / DECOMP / VERIFY / FULL) over a small AgentIF-OneDay-style
 * task set, run, judged and scored by the benchmark runner (the same one as `horizon-harness bench agentif`), and
 * printed like the paper's Table 3.
 *
 *   npm run example:ablation
 *
 * With OPENAI_API_KEY or ANTHROPIC_API_KEY set, the agent and the judge are that model; without, both are replayed offline.
 * Every run's workspace, the per-task judgements, results.json and table.md are kept under one temp directory, printed last.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AgentIfTaskSchema, runAgentIfBenchmark } from 'horizon-harness/benchmark';
import { replayBackend } from 'horizon-harness/testing';
import { replayJudge } from './support/ablation-judge.js';
import { ABLATION_TASKS } from './support/ablation-tasks.js';
import { backendFromEnv } from './support/backend-from-env.js';
import { demoTools } from './support/demo-tools.js';

const live = backendFromEnv();
console.log(
  live
    ? `Using live backend: ${live.label} (agent and judge).`
    : 'No OPENAI_API_KEY or ANTHROPIC_API_KEY set: running on the built-in replay backend and a replay judge (offline; numbers show the mechanics, not model quality).',
);

const out = await mkdtemp(path.join(tmpdir(), 'horizon-ablation-'));
const results = await runAgentIfBenchmark({
  tasks: ABLATION_TASKS.map(({ replay, ...record }, index) => ({
    task: AgentIfTaskSchema.parse(record),
    line: index + 1,
    attachments: [],
    referenceFiles: [],
  })),
  out,
  agent:
    live?.backend ??
    ((pair) => replayBackend(ABLATION_TASKS.find((t) => t.question_id === pair.task.question_id)!.replay)),
  judge: live?.backend ?? replayJudge(),
  tools: () => demoTools(),
  labels: { agent: live?.label ?? 'replay', judge: live?.label ?? 'replay judge' },
  onProgress: (event) => {
    if (event.type === 'pair-error') console.warn(`  ⚠ ${event.config} ${event.taskId}: ${event.error.message}`);
  },
});

console.log(`\nAblation over ${ABLATION_TASKS.length} tasks (means per task)\n`);
console.log(results.table);
console.log(`Results: ${out}`);
