/**
 * The context chart (the paper's context-management picture): every model call's request size against the window
 * and the compression and emergency thresholds, coloured by purpose, with compressions, prunes and overflows marked.
 * @module
 */
import { formatCount } from './format.js';
import { html, type SafeHtml } from './html.js';
import { type MemoryMark, purposesOf, type RunView } from './run-view.js';

/** What the chart draws its lines at. */
export interface ChartLimits {
  contextWindow: number;
  compressAt: number;
  emergencyAt: number;
  /** False when the window is the default because the caller gave none (the log does not record it). */
  windowKnown: boolean;
}

const WIDTH = 1000;
const HEIGHT = 320;
const PAD = { left: 70, right: 20, top: 16, bottom: 30 };

/** The chart of `view`'s model calls. */
export function contextChart(view: RunView, limits: ChartLimits): SafeHtml {
  const calls = view.calls;
  const peak = Math.max(0, ...calls.map((c) => c.requestTokens));
  const top = Math.max(limits.contextWindow, peak) * 1.05;
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const x = (i: number): number => PAD.left + (calls.length <= 1 ? plotW / 2 : (i / (calls.length - 1)) * plotW);
  const y = (tokens: number): number => PAD.top + plotH - (tokens / top) * plotH;
  const threshold = (name: string, share: number, cls: string): SafeHtml => {
    const tokens = limits.contextWindow * share;
    return html`<line class="${cls}" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${y(tokens)}" y2="${y(tokens)}"/><text class="axis" x="${PAD.left + 4}" y="${y(tokens) - 3}">${name} ${formatCount(tokens)}</text>`;
  };
  const markX = (mark: MemoryMark): number =>
    mark.beforeCall <= 0
      ? x(0)
      : mark.beforeCall >= calls.length
        ? x(calls.length - 1)
        : (x(mark.beforeCall - 1) + x(mark.beforeCall)) / 2;
  const answered = calls.filter((call) => call.answered).length;
  const used = purposesOf(view);
  const counts = { compress: 0, prune: 0, overflow: 0 };
  for (const mark of view.marks) counts[mark.kind] += 1;
  return html`<section id="context">
  <h2>Context per model call</h2>
  <p>${formatCount(calls.length)} model requests (${formatCount(answered)} answered); peak request <b id="peak-tokens">${formatCount(peak)}</b> tokens;
    window ${formatCount(limits.contextWindow)} tokens${limits.windowKnown ? '' : ' (assumed: the log does not record the window; pass contextWindow)'};
    ${counts.compress} compression(s), ${counts.prune} prune(s), ${counts.overflow} overflow(s).</p>
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
        html`<line class="mark m-${mark.kind}" data-kind="${mark.kind}" x1="${markX(mark)}" x2="${markX(mark)}" y1="${PAD.top}" y2="${PAD.top + plotH}"><title>${mark.kind} in ${mark.scope ?? 'a call'}: ${formatCount(mark.tokensBefore)} → ${formatCount(mark.tokensAfter)} tokens, ${mark.detail}</title></line>`,
    )}</g>
    <g id="calls">${calls.map(
      (call) =>
        html`<circle class="call p-${call.purpose}${call.answered ? '' : ' unanswered'}" data-answered="${String(call.answered)}" data-purpose="${call.purpose}" data-tokens="${call.requestTokens}" cx="${x(call.index)}" cy="${y(call.requestTokens)}" r="3"><title>call ${call.index + 1}, ${call.purpose}${call.scope ? ` in ${call.scope}` : ''}: ${formatCount(call.requestTokens)} tokens sent${call.inputTokens !== undefined ? `, ${formatCount(call.inputTokens)} in / ${formatCount(call.outputTokens ?? 0)} out (provider)` : ''}${call.retries > 0 ? `, ${call.retries} retry(ies)` : ''}${call.answered ? '' : ', no response (failed or stopped)'}</title></circle>`,
    )}</g>
  </svg>
  <p class="legend">${used.map((purpose) => html`<span class="key p-${purpose}">${purpose}</span> `)}<span class="key m-compress">compression</span> <span class="key m-prune">prune</span> <span class="key m-overflow">overflow</span></p>
</section>`;
}
