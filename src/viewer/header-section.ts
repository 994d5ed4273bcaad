/**
 * The page's header: the task, how the run ended and why, and its totals.
 * @module
 */
import type { ManagedRunReport } from '../modes/managed/report.js';
import { formatCost, formatCount, formatDuration, sum } from './format.js';
import { html, type SafeHtml } from './html.js';
import type { RunView } from './run-view.js';

/** The header of `view`: task, status (with why, unless it succeeded), duration, calls, tokens, cost, repairs. */
export function headerSection(view: RunView): SafeHtml {
  const result = view.result;
  const report = result?.report;
  const status = result?.status ?? (view.error ? 'error' : 'unfinished');
  const why = statusReason(view);
  const facts: Array<[string, string]> = [
    ['Mode', view.start?.mode ?? 'unknown'],
    ['Duration', formatDuration(report?.wallTimeMs ?? view.lastTimestamp - view.firstTimestamp)],
    ['Model calls', formatCount(report?.modelCalls ?? view.calls.filter((c) => c.answered).length)],
    ['Tokens in', formatCount(report?.inputTokens ?? sum(view.calls.map((c) => c.inputTokens ?? 0)))],
    ['Tokens out', formatCount(report?.outputTokens ?? sum(view.calls.map((c) => c.outputTokens ?? 0)))],
    ['Cost', report?.cost ? formatCost(report.cost.total, report.cost.currency) : 'not priced'],
    ['Repairs', formatCount(report?.repairs ?? view.repairs.length)],
    ['Resumes', formatCount(report?.resumes.count ?? view.resumes.length)],
    ['Warnings', formatCount(view.warnings.length)],
  ];
  return html`<header>
  <h1>Run <code>${view.runId}</code></h1>
  <p class="task">${view.start?.goal ?? '(the log has no run-start: the task is unknown)'}</p>
  <p class="status"><span class="badge s-${status}" id="run-status">${status}</span>${why ? html` <span class="why">${why}</span>` : ''}</p>
  <dl class="facts" id="facts">${facts.map(([name, value]) => html`<div><dt>${name}</dt><dd data-fact="${name}">${value}</dd></div>`)}</dl>
  ${
    view.warnings.length > 0
      ? html`<details class="warnings"><summary>${view.warnings.length} warning(s)</summary><ul>${view.warnings.map((w) => html`<li>${w}</li>`)}</ul></details>`
      : ''
  }
  ${view.otherRunIds.length > 0 ? html`<p class="note">This log also holds ${view.otherRunIds.length} other run(s): ${view.otherRunIds.join(', ')}.</p>` : ''}
</header>`;
}

/** Why the run did not succeed, from the result, a run error or the log's end. */
function statusReason(view: RunView): string | undefined {
  const result = view.result;
  if (result) {
    if (result.status === 'succeeded') return undefined;
    const blocked = (result.report as Partial<ManagedRunReport>).managed?.blocked;
    return result.error?.message ?? blocked?.reasons.join('; ');
  }
  if (view.error) return `${view.error.error.code} during ${view.error.stage}: ${view.error.error.message}`;
  return 'The log ends without run-finish: the run is still going, or it stopped (resume it to finish).';
}
