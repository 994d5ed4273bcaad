/**
 * Runs whose pages the viewer tests check: the offline demo, a managed run, a failed-and-repaired run carrying an XSS
 * corpus in every place untrusted text reaches the page, and a stopped-then-resumed run. Each gives the event log the
 * harness wrote in its workspace (`.harness/events.jsonl`, what `horizon-harness show <workspace>` reads), and the
 * result the harness returned.
 * @module
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { GenerateRequest, GenerateResult } from '../../../src/backend/types.js';
import type { RunResult } from '../../../src/contracts/work.js';
import { parseEventLog } from '../../../src/event-log/read.js';
import type { HarnessEvent } from '../../../src/events.js';
import { createHarness } from '../../../src/harness/harness.js';
import {
  DEMO_SCENARIO,
  DEMO_TASK,
  planOf,
  replayBackend,
  ScriptedBackend,
  submit,
  toolCall,
  verdict,
} from '../../../src/testing/index.js';
import { writeToFileTool } from '../../../src/tools/builtin/index.js';
import { writeFile } from '../../harness/helpers.js';
import { reportModel } from '../../managed/helpers.js';

/** A finished run: its workspace, its log as JSON lines, the events read back from it, and the harness's result. */
export interface LoggedRun {
  name: string;
  workspace: string;
  log: string;
  events: HarnessEvent[];
  result: RunResult;
}

/** Strings that would run script if any reached the page as HTML; a page passes when `window.__pwned` stays unset. */
export const XSS = [
  '<script>window.__pwned = "script"</script>',
  '<img src=x onerror="window.__pwned = \'img\'">',
  '</script><script>window.__pwned = "close"</script>',
  '"><svg onload="window.__pwned = \'svg\'">',
  "'><iframe srcdoc=\"<script>parent.__pwned='srcdoc'</script>\">",
  '\u2028</title><script>window.__pwned = "title"</script><!--',
];

/** The first prompt-injection strings of the shared AgentDojo fixture. */
export function injectionStrings(count: number): string[] {
  const file = path.resolve(
    import.meta.dirname,
    '../../../../shared/fixtures/injection/agentdojo/attack_strings.jsonl',
  );
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean).slice(0, count);
  return lines.map((line) => (JSON.parse(line) as { text: string }).text);
}

async function dir(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), 'viewer-run-'));
}

/** The run as its workspace's event log holds it. */
async function logged(name: string, workspace: string, result: RunResult): Promise<LoggedRun> {
  const log = await readFile(path.join(workspace, '.harness', 'events.jsonl'), 'utf8');
  return { name, workspace, log, events: parseEventLog(log), result };
}

/** `horizon-harness replay`: the Lisbon itinerary, one failed verification, one repair. */
export async function demoRun(): Promise<LoggedRun> {
  const workspace = await dir();
  const harness = createHarness({ backend: replayBackend(DEMO_SCENARIO), tools: [writeToFileTool()], workspace });
  const result = await harness.run(DEMO_TASK);
  await harness.close();
  return logged('demo', workspace, result);
}

/**
 * A run where untrusted text is hostile everywhere the page shows it: the task, subtask titles, tool arguments and
 * names, file names, answers and defects. Its first subtask attempt fails and is retried, its first verdict fails
 * and a repair fixes it.
 */
export async function hostileRun(): Promise<LoggedRun> {
  const [a = '', b = '', c = '', d = '', e = '', f = ''] = XSS;
  const injected = injectionStrings(3);
  const file = `notes ${b.replace(/\//g, '')}.md`;
  let executeCalls = 0;
  const backend = new ScriptedBackend((request: GenerateRequest): GenerateResult => {
    const lastIsTool = request.messages.at(-1)?.role === 'tool';
    switch (request.purpose) {
      case 'plan':
        return planOf(`Draft ${a}`, `Check ${d}`);
      case 'execute':
        executeCalls += 1;
        // The first attempt of the first subtask fails: its model call errors, so the subtask is retried.
        if (executeCalls === 1) throw new Error(`refused ${c}`);
        if (!lastIsTool) return toolCall('write_file', { path: file, content: `${a}\n${injected.join('\n')}` });
        return submit(`Done ${e}`, [file]);
      case 'synthesize':
        if (!lastIsTool) return toolCall(c, { note: f });
        return submit(`Deliverable ${f}`, [file]);
      case 'verify':
        if (request.messages.some((m) => typeof m.content === 'string' && m.content.includes('REPAIRED'))) {
          return verdict(true);
        }
        return verdict(false, [{ description: `Missing part ${a} ${injected[0]}`, artifact: file }]);
      default:
        if (!lastIsTool) return toolCall('write_file', { path: file, content: `REPAIRED ${d}` });
        return submit(`Repaired REPAIRED ${b}`, [file]);
    }
  });
  const workspace = await dir();
  const harness = createHarness({ backend, tools: [writeFile], workspace });
  const result = await harness.run(`Write notes ${a} ${b} ${injected[1]}`);
  await harness.close();
  return logged('hostile', workspace, result);
}

/** A managed run: the manager asks for report.md, the executor writes it, the audit completes the record. */
export async function managedRun(): Promise<LoggedRun> {
  const backend = new ScriptedBackend((request: GenerateRequest): GenerateResult => reportModel(request));
  const workspace = await dir();
  const harness = createHarness({ backend, mode: 'managed', tools: [writeFile], workspace });
  const result = await harness.run('Write report.md with the heading "# Rivers".');
  await harness.close();
  return logged('managed', workspace, result);
}

/** The demo stopped while its third subtask's model call is in flight, then resumed to the end: one log for both. */
export async function resumedRun(): Promise<LoggedRun> {
  const workspace = await dir();
  const first = createHarness({ backend: replayBackend(DEMO_SCENARIO), tools: [writeToFileTool()], workspace });
  const controller = new AbortController();
  first.on('llm-request', (event) => {
    if (event.scope === 'subtask-3') controller.abort();
  });
  const stopped = await first.run({ task: DEMO_TASK, runId: 'resumed-run', signal: controller.signal });
  await first.close();
  if (stopped.status !== 'aborted') throw new Error(`expected the first run to stop, got ${stopped.status}`);
  const again = createHarness({ backend: replayBackend(DEMO_SCENARIO), tools: [writeToFileTool()], workspace });
  const result = await again.resume('resumed-run', { workspace });
  await again.close();
  return logged('resumed', workspace, result);
}
