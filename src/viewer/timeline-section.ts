/**
 * The timeline: one row per stage, subtask, verification, repair or managed role's round, on one time axis, so
 * subtasks that ran side by side overlap; retries and resumes are marked.
 * @module
 */
import { clip, formatDuration } from './format.js';
import { html, type SafeHtml } from './html.js';
import type { LaneView, RunView } from './run-view.js';

const WIDTH = 1000;
const LABEL = 300;
const ROW = 22;
const RIGHT = 80;

/** The timeline of `view` as an SVG chart, with each lane's duration. */
export function timelineSection(view: RunView): SafeHtml {
  const lanes = view.lanes;
  if (lanes.length === 0) return html`<section id="timeline"><h2>Timeline</h2><p>No stage started.</p></section>`;
  const t0 = view.firstTimestamp;
  const span = Math.max(1, view.lastTimestamp - t0);
  const x = (t: number): number => LABEL + ((t - t0) / span) * (WIDTH - LABEL - RIGHT);
  const height = lanes.length * ROW + 24;
  const resumes = view.resumes.map(
    (r) =>
      html`<line class="resume" x1="${x(r.timestamp)}" x2="${x(r.timestamp)}" y1="0" y2="${height - 20}"><title>resumed (${r.stage})</title></line>`,
  );
  return html`<section id="timeline">
  <h2>Timeline</h2>
  <svg class="timeline" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="Timeline of the run's stages">
    ${lanes.map((lane, row) => laneRow(lane, row, x))}
    ${resumes}
    <text class="axis" x="${LABEL}" y="${height - 6}">0</text>
    <text class="axis" x="${WIDTH - RIGHT}" y="${height - 6}" text-anchor="end">${formatDuration(span)}</text>
  </svg>
</section>`;
}

function laneRow(lane: LaneView, row: number, x: (t: number) => number): SafeHtml {
  const y = row * ROW;
  const left = x(lane.start);
  const width = Math.max(2, x(lane.end) - left);
  const duration = lane.end - lane.start;
  const status = lane.status ?? 'unknown';
  return html`<g class="lane" data-lane="${lane.key}" data-kind="${lane.kind}" data-status="${status}" data-duration-ms="${duration}">
    <title>${lane.label} — ${status}, ${formatDuration(duration)}${lane.retries.length > 0 ? `, ${lane.retries.length} retry(ies)` : ''}</title>
    <text class="label" x="4" y="${y + 15}">${clip(lane.label, 46)}</text>
    <rect class="bar k-${lane.kind} st-${statusClass(status)}" x="${left}" y="${y + 4}" width="${width}" height="${ROW - 8}" rx="3"/>
    ${lane.retries.map((t) => html`<line class="retry" x1="${x(t)}" x2="${x(t)}" y1="${y + 1}" y2="${y + ROW - 1}"/>`)}
    <text class="dur" x="${left + width + 4}" y="${y + 15}">${formatDuration(duration)}</text>
  </g>`;
}

/** The CSS class of a lane status: failures stand out, the rest stays in the lane kind's colour. */
function statusClass(status: string): string {
  if (/^(failed|aborted|timeout|blocked|unverified)/.test(status) || /violation|suspect/.test(status)) return 'bad';
  return 'ok';
}
