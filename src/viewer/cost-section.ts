/**
 * Tokens, cost and cache hits by purpose.
 * @module
 */
import { formatCost, formatCount, sum } from './format.js';
import { html, type SafeHtml } from './html.js';
import { purposesOf, type RunView } from './run-view.js';

/**
 * A table of calls, tokens, cached input tokens and cost per purpose, from the answered model calls of `view` (a
 * request that got no response reported no usage).
 */
export function costSection(view: RunView): SafeHtml {
  const rows = purposesOf(view)
    .map((purpose) => {
      const calls = view.calls.filter((call) => call.purpose === purpose && call.answered);
      const priced = calls.filter((call) => call.cost !== undefined);
      return {
        purpose,
        calls: calls.length,
        input: sum(calls.map((c) => c.inputTokens ?? 0)),
        output: sum(calls.map((c) => c.outputTokens ?? 0)),
        cachedKnown: calls.some((c) => c.cachedInputTokens !== undefined),
        cached: sum(calls.map((c) => c.cachedInputTokens ?? 0)),
        cost: priced.length > 0 ? sum(priced.map((c) => c.cost ?? 0)) : undefined,
        currency: priced[0]?.currency ?? '',
        unpriced: calls.length - priced.length,
      };
    })
    .filter((row) => row.calls > 0);
  if (rows.length === 0) return html``;
  return html`<section id="cost">
  <h2>Tokens and cost by purpose</h2>
  <table class="cost"><thead><tr><th>Purpose</th><th>Calls</th><th>Input tokens</th><th>Cached input</th><th>Output tokens</th><th>Cost</th></tr></thead>
  <tbody>${rows.map(
    (row) =>
      html`<tr data-purpose="${row.purpose}" data-calls="${row.calls}"><td><span class="key p-${row.purpose}">${row.purpose}</span></td><td>${formatCount(row.calls)}</td><td>${formatCount(row.input)}</td><td>${row.cachedKnown ? formatCount(row.cached) : 'not reported'}</td><td>${formatCount(row.output)}</td><td>${row.cost !== undefined ? formatCost(row.cost, row.currency) : 'not priced'}${row.cost !== undefined && row.unpriced > 0 ? ` (+${row.unpriced} unpriced)` : ''}</td></tr>`,
  )}</tbody></table>
</section>`;
}
