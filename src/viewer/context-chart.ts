/**
 * The context chart (the paper's context-management picture): every model call's request size against its window
 * and the compression and emergency thresholds, coloured by purpose, with compressions, prunes, overflows and agings
 * marked.
 * @module
 */
import { formatCount } from './format.js';
import { html, type SafeHtml } from './html.js';
import { type CallView, type MemoryMark, purposesOf, type RunView } from './run-view.js';

/** What the chart draws its lines at. */
export interface ChartLimits {
  /** The window drawn for a call (each role's backend may have its own). */
  windowOf: (call: CallView) => number;
  compressAt: number;
  emergencyAt: number;
  /** False when some call's window is the default because neither the log nor the caller said it. */
  windowKnown: boolean;
  /** False when the thresholds are the defaults because neither the log nor the caller said them. */
  thresholdsKnown: boolean;
}

const WIDTH = 1000;
const HEIGHT = 320;
const PAD = { left: 70, right: 20, top: 16, bottom: 30 };

/** The chart of `view`'s model calls. */
export function contextChart(view: RunView, limits: ChartLimits): SafeHtml {
  const calls = view.calls;
  const peak = Math.max(0, ...calls.map((c) => c.requestTokens));
  const windows = calls.map(limits.windowOf);
  const widest = Math.max(0, ...windows);
  const top = Math.max(widest, peak, 1) * 1.05;
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const x = (i: number): number => PAD.left + (calls.length <= 1 ? plotW / 2 : (i / (calls.length - 1)) * plotW);
  const y = (tokens: number): number => PAD.top + plotH - (tokens / top) * plotH;
  // A step line at each call's own window (flat when every call has the same one).
  const threshold = (name: string, share: number, cls: string): SafeHtml => {
    if (calls.length === 0) return html``;
    const edge = (i: number): number =>
      i <= 0 ? PAD.left : i >= calls.length ? WIDTH - PAD.right : (x(i - 1) + x(i)) / 2;
    const points = windows.flatMap((window, i) => [
      `${edge(i)},${y(window * share)}`,
      `${edge(i + 1)},${y(window * share)}`,
    ]);
    const first = (windows[0] ?? 0) * share;
    return html`<polyline class="${cls}" fill="none" points="${points.join(' ')}"/><text class="axis" x="${PAD.left + 4}" y="${y(first) - 3}">${name} ${formatCount(first)}</text>`;
  };
  const markX = (mark: MemoryMark): number =>
    mark.beforeCall <= 0
      ? x(0)
      : mark.beforeCall >= calls.length
        ? x(calls.length - 1)
        : (x(mark.beforeCall - 1) + x(mark.beforeCall)) / 2;
  const answered = calls.filter((call) => call.answered).length;
  const used = purposesOf(view);
  const counts = { compress: 0, prune: 0, overflow: 0, aging: 0 };
  for (const mark of view.marks) counts[mark.kind] += 1;
  return html`<section id="context">
  <h2>Context per model call</h2>
  <p>${formatCount(calls.length)} model requests (${formatCount(answered)} answered); peak request <b id="peak-tokens">${formatCount(peak)}</b> tokens;
    ${windowText(windows, limits.windowKnown)}; compression at ${formatShare(limits.compressAt)}, emergency at ${formatShare(limits.emergencyAt)} of the window${limits.thresholdsKnown ? '' : ' (assumed: the log does not record them)'};
    ${counts.compress} compression(s), ${counts.prune} prune(s), ${counts.overflow} overflow(s), <span id="aging-count">${counts.aging}</span> aging(s).</p>
  <svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="Request tokens of each model call">
    <line class="axisline" x1="${PAD.left}" x2="${PAD.left}" y1="${PAD.top}" y2="${PAD.top + plotH}"/>
    <line class="axisline" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${PAD.top + plotH}" y2="${PAD.top + plotH}"/>
    ${threshold('window', 1, 'window')}
    ${threshold('emergency', limits.emergencyAt, 'emergency')}
    ${threshold('compress', limits.compressAt, 'compress')}
    <text class="axis" x="${PAD.left - 6}" y="${PAD.top + plotH}" text-anchor="end">0</text>
    <text class="axis" x="${PAD.left}" y="${HEIGHT - 8}">call 1</text>
    <text class="axis" x="${WIDTH - PAD.right}" y="${HEIGHT - 8}" text-anchor="end">call ${calls.length}</text>
    <g id="marks">${view.marks.map(
      (mark) =>
        html`<line class="mark m-${mark.kind}" data-kind="${mark.kind}" x1="${markX(mark)}" x2="${markX(mark)}" y1="${PAD.top}" y2="${PAD.top + plotH}"><title>${mark.kind} in ${mark.scope ?? 'a call'}: ${mark.tokensBefore !== undefined && mark.tokensAfter !== undefined ? `${formatCount(mark.tokensBefore)} → ${formatCount(mark.tokensAfter)} tokens, ` : ''}${mark.detail}</title></line>`,
    )}</g>
    <g id="calls">${calls.map(
      (call) =>
        html`<circle class="call p-${call.purpose}${call.answered ? '' : ' unanswered'}" data-answered="${String(call.answered)}" data-purpose="${call.purpose}" data-tokens="${call.requestTokens}" data-window="${limits.windowOf(call)}" cx="${x(call.index)}" cy="${y(call.requestTokens)}" r="3"><title>call ${call.index + 1}, ${call.purpose}${call.scope ? ` in ${call.scope}` : ''}: ${formatCount(call.requestTokens)} tokens sent of a ${formatCount(limits.windowOf(call))}-token window${call.inputTokens !== undefined ? `, ${formatCount(call.inputTokens)} in / ${formatCount(call.outputTokens ?? 0)} out (provider)` : ''}${call.retries > 0 ? `, ${call.retries} retry(ies)` : ''}${call.answered ? '' : ', no response (failed or stopped)'}</title></circle>`,
    )}</g>
  </svg>
  <p class="legend">${used.map((purpose) => html`<span class="key p-${purpose}">${purpose}</span> `)}<span class="key m-compress">compression</span> <span class="key m-prune">prune</span> <span class="key m-overflow">overflow</span> <span class="key m-aging">aging</span></p>
</section>`;
}

/** The window, or the range of windows when the roles' backends differ. */
function windowText(windows: readonly number[], known: boolean): string {
  if (windows.length === 0) return 'no call';
  const low = Math.min(...windows);
  const high = Math.max(...windows);
  const text =
    low === high
      ? `window ${formatCount(low)} tokens`
      : `windows ${formatCount(low)}–${formatCount(high)} tokens (by role)`;
  return known ? text : `${text} (assumed where the log does not record it; pass contextWindow)`;
}

function formatShare(share: number): string {
  return `${Math.round(share * 1000) / 10} %`;
}
