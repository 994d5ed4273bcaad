/**
 * Ablation: the paper's four configurations (DIRECT / DECOMP / VERIFY / FULL) over a small AgentIF-OneDay-style
 * task set, scored with per-criterion rubric judgements, printed like the paper's Table 3.
 *
 *   npm run example:ablation
 *
 * With OPENAI_API_KEY or ANTHROPIC_API_KEY set, the agent and the judge are that model; without, both are replayed offline.
 * Every run's workspace is kept under one temp directory, printed last.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createHarness, type LlmBackend } from 'horizon-harness';
import { ScriptedBackend, replayBackend, reply } from 'horizon-harness/testing';
import { ABLATION_TASKS } from './support/ablation-tasks.js';
import { backendFromEnv } from './support/backend-from-env.js';
import { demoTools } from './support/demo-tools.js';
import { scoreWithJudge } from './support/rubric.js';

const CONFIGS = [
  { name: 'DIRECT', decomposition: false, verification: false },
  { name: 'DECOMP', decomposition: true, verification: false },
  { name: 'VERIFY', decomposition: false, verification: true },
  { name: 'FULL', decomposition: true, verification: true },
] as const;

const live = backendFromEnv();
console.log(
  live
    ? `Using live backend: ${live.label} (agent and judge).`
    : 'No OPENAI_API_KEY or ANTHROPIC_API_KEY set: running on the built-in replay backend and a replay judge (offline; numbers show the mechanics, not model quality).',
);

/** A replay judge: a criterion naming a quoted section is satisfied when a delivered file has that heading. */
function replayJudge(): LlmBackend {
  return new ScriptedBackend(
    (request) => {
      const prompt = String(request.messages.at(-1)?.content ?? '');
      const files = (prompt.split('## Answer files')[1] ?? '').split('## Criteria')[0]?.trim() ?? '';
      const noFiles = !files || files === '(no files delivered)';
      const results = [...prompt.matchAll(/Criterion (\d+) \(ID: \d+, Score: (-?\d+)\): (.*)/g)].map((m) => {
        const content = m[3] ?? '';
        const section = /"([^"]+)"/.exec(content)?.[1];
        const satisfied = section
          ? files.includes(`## ${section}`)
          : /No .* file was delivered/.test(content) && noFiles;
        return { criterion_id: m[1], satisfied, reasoning: section ? `looked for "## ${section}"` : 'file check' };
      });
      return reply(JSON.stringify({ criteria_results: results }));
    },
    { provider: 'replay', modelId: 'replay-judge' },
  );
}

const judge = live?.backend ?? replayJudge();
// One parent directory for every run's workspace, so the deliverables can be inspected and removed together.
const workspaces = await mkdtemp(path.join(tmpdir(), 'horizon-ablation-'));
const rows: string[][] = [];
for (const config of CONFIGS) {
  let total = 0;
  let ms = 0;
  let calls = 0;
  let tools = 0;
  let tokens = 0;
  for (const task of ABLATION_TASKS) {
    const backend = live?.backend ?? replayBackend(task.replay);
    const harness = createHarness({
      backend,
      tools: demoTools(),
      decomposition: config.decomposition,
      verification: config.verification,
      workspace: path.join(workspaces, `${config.name.toLowerCase()}-${task.question_id}`),
    });
    const result = await harness.run(task.description);
    const judged = await scoreWithJudge(judge, task, result);
    if (judged.error)
      console.warn(
        `  ⚠ ${config.name} ${task.question_id}: the judge's reply was unusable, scored 0 (${judged.error})`,
      );
    total += judged.score;
    ms += result.report.wallTimeMs;
    calls += result.report.modelCalls;
    tools += result.report.toolCalls;
    tokens += result.report.inputTokens + result.report.outputTokens;
  }
  const n = ABLATION_TASKS.length;
  rows.push([
    config.name,
    (total / n).toFixed(3),
    (ms / n / 1000).toFixed(2),
    (calls / n).toFixed(1),
    (tools / n).toFixed(1),
    Math.round(tokens / n).toString(),
  ]);
}

const header = ['Config', 'Score', 'Latency s', 'Model calls', 'Tool calls', 'Tokens'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
const line = (cells: string[]) =>
  cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
console.log(`\nAblation over ${ABLATION_TASKS.length} tasks (means per task)\n`);
console.log(line(header));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const row of rows) console.log(line(row));
console.log(`\nWorkspaces: ${workspaces}`);
