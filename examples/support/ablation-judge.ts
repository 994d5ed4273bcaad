/**
 * A replay judge for the offline ablation: it reads the judge prompt of the AgentIF-OneDay contract and marks a
 * criterion naming a quoted section satisfied when a delivered file has that heading.
 * @module
 */
import type { LlmBackend } from 'horizon-harness';
import { ScriptedBackend, reply } from 'horizon-harness/testing';

/** Criterion lines as the contract writes them: `Criterion 2 (ID: 2, Score: +1): …`. */
const CRITERION = /^Criterion (\d+) \(ID: \d+, Score: [+-]?\d+\): (.*)$/gm;

/** The judge of the offline ablation (a stand-in for a strong model; it checks headings, nothing more). */
export function replayJudge(): LlmBackend {
  return new ScriptedBackend(
    (request) => {
      const user = request.messages.find((m) => m.role === 'user')?.content;
      const prompt =
        typeof user === 'string' ? user : (user ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('\n');
      const files = prompt.split('## Answer files')[1]?.split('## Reference answer')[0] ?? '';
      const noFiles = files.includes('(no files delivered)');
      const results = [...prompt.matchAll(CRITERION)].map(([, id, content = '']) => {
        const section = /"([^"]+)"/.exec(content)?.[1];
        const satisfied = section
          ? files.includes(`## ${section}`)
          : /No .* file was delivered/.test(content) && noFiles;
        return { criterion_id: id, satisfied, reasoning: section ? `looked for "## ${section}"` : 'file check' };
      });
      return reply(JSON.stringify({ criteria_results: results }));
    },
    { provider: 'replay', modelId: 'replay-judge' },
  );
}
