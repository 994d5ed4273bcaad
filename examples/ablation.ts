/**
 * Ablation: the paper's four configurations (DIRECT / DECOMP / VERIFY / FULL) over a small AgentIF-OneDay-style
 * task set, scored with per-criterion rubric judgements, printed like the paper's Table 3.
 *
 *   npx tsx examples/ablation.ts
 *
 * With OPENAI_API_KEY or ANTHROPIC_API_KEY set, the agent and the judge are that model; without, both are replayed offline.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { createHarness, parseJsonReply, type LlmBackend, type RunResult } from '../src/index.js';
import { ScriptedBackend, reply } from '../src/testing/index.js';
import { ABLATION_TASKS, type AgentIfTask } from './support/ablation-tasks.js';
import { backendFromEnv } from './support/backend-from-env.js';
import { replayBackend } from './support/replay-backend.js';
import { demoTools } from './support/demo-tools.js';

const CONFIGS = [
  { name: 'DIRECT', decomposition: false, verification: false },
  { name: 'DECOMP', decomposition: true, verification: false },
  { name: 'VERIFY', decomposition: false, verification: true },
  { name: 'FULL', decomposition: true, verification: true },
] as const;

const CriteriaResults = z.object({
  criteria_results: z.array(z.object({ criterion_id: z.union([z.string(), z.number()]), satisfied: z.boolean() })),
});

const live = backendFromEnv();
console.log(
  live
    ? `Using live backend: ${live.label} (agent and judge).`
    : 'No OPENAI_API_KEY or ANTHROPIC_API_KEY set: running on the built-in replay backend and a replay judge (offline; numbers show the mechanics, not model quality).',
);

/** Reads the deliverable's files (bounded) for the judge. */
async function deliveredText(result: RunResult): Promise<string> {
  const parts: string[] = [];
  for (const file of result.deliverable.files) {
    try {
      const body = await readFile(path.join(result.workspace, file), 'utf8');
      parts.push(`--- ${file} ---\n${body.slice(0, 10_000)}`);
    } catch {
      parts.push(`--- ${file} --- (missing)`);
    }
  }
  return parts.join('\n');
}

/** A replay judge: a criterion naming a quoted section is satisfied when a delivered file has that heading. */
function replayJudge(): LlmBackend {
  return new ScriptedBackend((request) => {
    const prompt = String(request.messages.at(-1)?.content ?? '');
    const files = prompt.split('## Answer files')[1] ?? '';
    const results = [...prompt.matchAll(/Criterion (\d+) \(ID: \d+, Score: (-?\d+)\): (.*)/g)].map((m) => {
      const content = m[3] ?? '';
      const section = /"([^"]+)"/.exec(content)?.[1];
      const satisfied = section ? files.includes(`## ${section}`) : /No .* file was delivered/.test(content) && !files.trim();
      return { criterion_id: m[1], satisfied, reasoning: section ? `looked for "## ${section}"` : 'file check' };
    });
    return reply(JSON.stringify({ criteria_results: results }));
  }, { provider: 'replay', modelId: 'replay-judge' });
}

/** Scores one deliverable: max(0, Σ satisfied scores) / Σ positive scores. */
async function score(judge: LlmBackend, task: AgentIfTask, result: RunResult): Promise<number> {
  const criteria = task.score_criteria.map((c, i) => `Criterion ${i + 1} (ID: ${i + 1}, Score: ${c.score}): ${c.content}`);
  const prompt = [
    `## Question\n${task.description}`,
    `## Answer text\n${result.deliverable.answer}`,
    `## Answer files\n${(await deliveredText(result)) || '(no files delivered)'}`,
    `## Criteria\n${criteria.join('\n')}`,
    'For each criterion decide whether the answer matches its description (for a negative score: whether the penalty applies). ' +
      'A criterion that needs a delivered file is not satisfied when no file was delivered. Reply with JSON only: ' +
      '{"criteria_results":[{"criterion_id":"1","satisfied":true,"reasoning":"…"}]}',
  ].join('\n\n');
  const answer = await judge.generate({ messages: [{ role: 'user', content: prompt }], purpose: 'verify' });
  const parsed = parseJsonReply(answer.message.content, CriteriaResults);
  if (!parsed.ok) return 0;
  const satisfied = new Set(parsed.value.criteria_results.filter((r) => r.satisfied).map((r) => String(r.criterion_id)));
  const gained = task.score_criteria.reduce((sum, c, i) => sum + (satisfied.has(String(i + 1)) ? c.score : 0), 0);
  const positive = task.score_criteria.reduce((sum, c) => sum + Math.max(0, c.score), 0);
  return positive === 0 ? 0 : Math.max(0, gained) / positive;
}

const judge = live?.backend ?? replayJudge();
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
    });
    const result = await harness.run(task.description);
    total += await score(judge, task, result);
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
const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
console.log(`\nAblation over ${ABLATION_TASKS.length} tasks (means per task)\n`);
console.log(line(header));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const row of rows) console.log(line(row));
