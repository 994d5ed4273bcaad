/**
 * The replay backend of `horizon-harness replay` and of the examples: a ScriptedBackend whose answers are computed
 * from each request, by purpose, so the whole pipeline runs offline with realistic traffic (plan JSON, tool calls
 * writing real files, submit_answer, verdicts judged from file previews, repairs).
 * @module
 */
import type { GenerateRequest, GenerateResult, Message } from '../backend/types.js';
import { ScriptedBackend } from '../testing/scripted-backend.js';
import { planOf, reply, submit, toolCall, verdict } from '../testing/replies.js';

/** What the replayed agent knows about a task: the deliverable file and its sections. */
export interface ReplayScenario {
  /** Workspace-relative path of the deliverable file. */
  file: string;
  title: string;
  sections: Array<{ heading: string; body: string }>;
  /** A section the agent leaves out of its first full draft (what verification, and sometimes decomposition, catch). */
  forgotten?: string;
  /** `single`: only a single do-everything loop forgets it (decomposition helps); `always`: every first draft does. */
  forgets?: 'single' | 'always';
}

/** A backend that replays a plausible agent for `scenario`; `modelId` is `replay`. */
export function replayBackend(scenario: ReplayScenario): ScriptedBackend {
  return new ScriptedBackend((request) => answer(scenario, request), { provider: 'replay', modelId: 'replay', contextWindow: 128_000 });
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
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

function text(message: Message | undefined): string {
  if (!message) return '';
  return typeof message.content === 'string'
    ? message.content
    : message.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}
