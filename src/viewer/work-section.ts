/**
 * What each loop did: a subtask's, the synthesis's or a repair's tool calls (name, arguments, duration, error, output
 * size, what the model was shown of it and where it was saved) and the answer and files it handed on. Collapsed until opened.
 * @module
 */
import type { Deliverable } from '../contracts/work.js';
import { bounded, formatCount, formatDuration } from './format.js';
import { html, type SafeHtml } from './html.js';
import type { LaneView, RunView, ToolView } from './run-view.js';

/** Characters of a tool call's arguments shown. */
const ARGUMENT_CHARS = 1_200;
/** Characters of an answer shown. */
const ANSWER_CHARS = 4_000;

/** The loops of a pipeline run (subtasks, synthesis, repairs) with their tool calls and hand-offs. */
export function workSection(view: RunView): SafeHtml {
  const lanes = view.lanes.filter((lane) => ['subtask', 'synthesis', 'repair', 'other'].includes(lane.kind));
  if (lanes.length === 0) return html``;
  return html`<section id="work">
  <h2>Subtasks and tool calls</h2>
  ${lanes.map((lane) => loopDetails(lane, handOffOf(view, lane)))}
</section>`;
}

/** One loop, collapsed: its summary line, then its hand-off and tool calls. */
export function loopDetails(lane: LaneView, handOff?: HandOff): SafeHtml {
  const errors = lane.tools.filter((tool) => tool.isError).length;
  return html`<details class="loop" data-lane="${lane.key}" data-tool-calls="${lane.tools.length}">
  <summary><b>${lane.label}</b> — ${lane.status ?? 'unfinished'}, ${formatDuration(lane.end - lane.start)}, ${lane.tools.length} tool call(s)${errors > 0 ? html`, <span class="bad">${errors} failed</span>` : ''}${lane.retries.length > 0 ? `, ${lane.retries.length} retry(ies)` : ''}</summary>
  ${handOff ? handOffBlock(handOff) : ''}
  ${lane.tools.length > 0 ? toolTable(lane.tools) : ''}
</details>`;
}

/** What a loop handed on. */
export interface HandOff extends Deliverable {
  attempts?: number;
  error?: string;
}

function handOffOf(view: RunView, lane: LaneView): HandOff | undefined {
  if (lane.kind === 'subtask') return view.subtasks.get(lane.key);
  if (lane.kind === 'synthesis') return view.synthesis?.deliverable;
  if (lane.kind === 'repair') return view.repairs[Number(lane.key.slice('repair-'.length)) - 1]?.finish?.deliverable;
  return undefined;
}

function handOffBlock(handOff: HandOff): SafeHtml {
  return html`<div class="handoff">
  ${handOff.attempts !== undefined ? html`<p>Attempts: ${handOff.attempts}</p>` : ''}
  ${handOff.error ? html`<p class="bad">Error: ${bounded(handOff.error, ANSWER_CHARS)}</p>` : ''}
  <p>Answer:</p><pre class="answer">${bounded(handOff.answer, ANSWER_CHARS)}</pre>
  <p>Files: ${handOff.files.length > 0 ? fileList(handOff.files) : 'none'}</p>
</div>`;
}

/** File names as code, comma-separated. */
export function fileList(files: readonly string[]): SafeHtml {
  return html`${files.map((file, i) => html`${i > 0 ? ', ' : ''}<code class="file">${file}</code>`)}`;
}

/** A loop's tool calls as a table. */
export function toolTable(tools: readonly ToolView[]): SafeHtml {
  return html`<table class="tools">
  <thead><tr><th>Tool</th><th>Arguments</th><th>Duration</th><th>Result</th></tr></thead>
  <tbody>${tools.map(
    (tool) => html`<tr class="${tool.isError ? 'bad' : ''}" data-tool="${tool.toolName}">
    <td><code>${tool.toolName}</code></td>
    <td><pre>${bounded(tool.arguments, ARGUMENT_CHARS)}</pre></td>
    <td>${tool.durationMs !== undefined ? formatDuration(tool.durationMs) : '—'}</td>
    <td>${toolOutcome(tool)}</td>
  </tr>`,
  )}</tbody>
</table>`;
}

function toolOutcome(tool: ToolView): SafeHtml {
  if (tool.outputChars === undefined) return html`no result (interrupted)`;
  return html`${tool.isError ? 'error, ' : ''}${formatCount(tool.outputChars)} chars of output${
    tool.savedTo ? html` (full output in <code class="file">${tool.savedTo}</code>)` : ''
  }${tool.files.length > 0 ? html`; files: ${fileList(tool.files)}` : ''}${
    tool.output !== undefined
      ? html`<details class="output"><summary>output shown to the model</summary><pre>${tool.output}</pre></details>`
      : ''
  }`;
}
