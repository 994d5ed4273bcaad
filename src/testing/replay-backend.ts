/**
 * A replay backend: an offline stand-in for a model that carries out one kind of task (write a Markdown file with
 * named sections) through the whole pipeline with realistic traffic: plan JSON, tool calls writing real files,
 * submit_answer, verdicts judged from the file previews the verifier is shown, repairs. `horizon-harness replay` and
 * the examples run on it.
 * @module
 */
import type { GenerateRequest, GenerateResult, Message } from '../backend/types.js';
import { ScriptedBackend } from './scripted-backend.js';
import { planOf, reply, submit, toolCall, verdict } from './replies.js';

/** What the replayed agent knows about a task: the deliverable file and its sections. */
export interface ReplayScenario {
  /** Workspace-relative path of the deliverable file. */
  file: string;
  title: string;
  sections: Array<{ heading: string; body: string }>;
  /** A section the agent leaves out of its first full draft (what verification, and sometimes decomposition, catch). */
  forgotten?: string;
  /**
   * `single`: only a single do-everything loop forgets it (decomposition helps); `always`: every first draft does.
   * @defaultValue 'single'
   */
  forgets?: 'single' | 'always';
}

/**
 * A backend that replays a plausible agent for `scenario`, computing each answer from the request (`modelId` is
 * `replay`): for demos, examples and smoke tests of what a host builds around a run (progress output, event
 * wiring, reports) without a key or a network. To assert what a role does, script it with {@link ScriptedBackend}.
 *
 * @example
 * ```ts
 * const backend = replayBackend({
 *   file: 'memo.md',
 *   title: 'Offsite',
 *   sections: [{ heading: 'Agenda', body: '9:00 kickoff' }, { heading: 'Logistics', body: 'Train at 8:10' }],
 *   forgotten: 'Logistics', // left out of every first draft, so verification and a repair show up
 *   forgets: 'always',
 * });
 * const result = await createHarness({ backend, tools: [writeToFileTool()] }).run('Write memo.md …');
 * ```
 */
export function replayBackend(scenario: ReplayScenario, options: ReplayBackendOptions = {}): ScriptedBackend {
  const stream = options.stream === true;
  return new ScriptedBackend((request) => (stream ? narrated : answer)(scenario, request), {
    provider: 'replay',
    modelId: 'replay',
    contextWindow: 128_000,
    stream,
  });
}

/** Options of {@link replayBackend}. */
export interface ReplayBackendOptions {
  /**
   * Like the adapters' `stream` option: the harness calls `stream()` and emits `text-delta` (and tool-call) events,
   * so an offline run shows what live output looks like. The agent then also says what it is doing before each tool
   * call (`Writing notes/agenda.md.`), as a streaming model does; without streaming its tool calls carry no text.
   * @defaultValue false
   */
  stream?: boolean;
}

/** {@link answer}, with a line of narration on each tool call, for a streamed run to show. */
function narrated(s: ReplayScenario, request: GenerateRequest): GenerateResult {
  const result = answer(s, request);
  const call = result.message.toolCalls[0];
  if (!call || call.name === 'submit_answer' || result.message.content) return result;
  const target = (JSON.parse(call.arguments) as { path?: string }).path;
  return {
    ...result,
    message: { ...result.message, content: target ? `Writing ${target}.` : `Calling ${call.name}.` },
  };
}

function answer(s: ReplayScenario, request: GenerateRequest): GenerateResult {
  switch (request.purpose) {
    case 'plan':
      return planOf(
        ...s.sections.map((sec) => ({
          title: `Draft: ${sec.heading}`,
          objective: `Research and draft the "${sec.heading}" section; save it under notes/.`,
          expectedOutput: `notes/${slug(sec.heading)}.md`,
        })),
        { title: `Assemble ${s.file}`, objective: `Combine the drafts into ${s.file}.`, expectedOutput: s.file },
      );
    case 'execute':
    case 'synthesize':
    case 'repair':
      return act(s, request);
    case 'verify':
      return judgeByPreview(s, request);
    case 'summarize':
      return reply('Summary of earlier rounds: drafts were written to notes/ and the deliverable file was started.');
    default:
      return reply('');
  }
}

/** One ReAct step: write a file first, then submit once the tool result is back. */
function act(s: ReplayScenario, request: GenerateRequest): GenerateResult {
  const task = text(request.messages[1]);
  const wrote = request.messages.some((m) => m.role === 'tool');
  const draft = /Subtask \d+ of \d+: Draft: (.+)/.exec(task)?.[1]?.trim();
  if (draft) {
    const section = s.sections.find((sec) => sec.heading === draft);
    const path = `notes/${slug(draft)}.md`;
    return wrote
      ? submit(`Drafted: ${draft}. Key points are in ${path}.`, [path])
      : toolCall('write_to_file', { path, content: `## ${draft}\n\n${section?.body ?? ''}\n` });
  }
  if (request.purpose === 'synthesize' && task.split('\n').some((l) => l.startsWith('Files:') && l.includes(s.file))) {
    return submit(`The deliverable is ${s.file}.`, [s.file]);
  }
  const repairing = request.purpose === 'repair';
  const decomposed = task.includes('Drafted:');
  const remembers = repairing || (decomposed && s.forgets !== 'always');
  const keep = s.sections.filter((sec) => remembers || sec.heading !== s.forgotten);
  return wrote
    ? submit(`${repairing ? 'Fixed' : 'Wrote'} ${s.file} with ${keep.length} sections.`, [s.file])
    : toolCall('write_to_file', { path: s.file, content: render(s.title, keep) });
}

/**
 * Judges like a careful reviewer, by content: a section counts when its `## ` heading line is in the verify prompt,
 * which shows the delivered files' previews (the request and the answers name the sections, never as heading lines).
 */
function judgeByPreview(s: ReplayScenario, request: GenerateRequest): GenerateResult {
  const headings = new Set(
    text(request.messages[1])
      .split('\n')
      .filter((line) => line.startsWith('## '))
      .map((line) => line.slice(3).trim()),
  );
  const missing = s.sections.filter((sec) => !headings.has(sec.heading));
  return verdict(
    missing.length === 0,
    missing.map((sec) => ({ description: `The section "${sec.heading}" is missing; add it.`, artifact: s.file })),
  );
}

function render(title: string, sections: ReplayScenario['sections']): string {
  return `${[`# ${title}`, ...sections.map((sec) => `## ${sec.heading}\n\n${sec.body}`)].join('\n\n')}\n`;
}

function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

function text(message: Message | undefined): string {
  if (!message) return '';
  return typeof message.content === 'string'
    ? message.content
    : message.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}
