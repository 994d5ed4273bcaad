/**
 * Managed mode: each round's manager decision, execution, audit and integrity violations, and the task state after
 * the round with the records whose status changed.
 * @module
 */
import type { TaskRecord, TaskState } from '../contracts/task-state.js';
import { bounded } from './format.js';
import { html, type SafeHtml } from './html.js';
import type { RoundView, RunView } from './run-view.js';
import { fileList, loopDetails } from './work-section.js';

const TEXT_CHARS = 2_000;

/** The rounds of a managed run; nothing for a pipeline run. */
export function managedSection(view: RunView): SafeHtml {
  if (view.rounds.length === 0) return html``;
  let previous: TaskState | undefined;
  const rounds = view.rounds.map((round) => {
    const state = round.audit?.state ?? round.decision?.state;
    const item = roundDetails(view, round, state, previous);
    previous = state ?? previous;
    return item;
  });
  return html`<section id="managed">
  <h2>Rounds (manager → execution → audit)</h2>
  ${rounds}
</section>`;
}

function roundDetails(view: RunView, round: RoundView, state: TaskState | undefined, before?: TaskState): SafeHtml {
  const decision = round.decision;
  const audit = round.audit;
  const execution = view.lanes.find((lane) => lane.key === `execute-${round.round}`);
  const auditLoop = view.lanes.find((lane) => lane.key === `audit-${round.round}`);
  return html`<details class="round" data-round="${round.round}" data-next="${decision?.next ?? ''}" data-audit="${audit?.status ?? ''}" data-integrity="${audit?.integrity ?? ''}">
  <summary><b>Round ${round.round}</b> — manager: ${decision?.next ?? 'no decision'}${audit ? `; audit: ${audit.status}, ${audit.integrity}` : ''}${round.violations.length > 0 ? html` <span class="bad">integrity violation</span>` : ''}</summary>
  ${decision ? decisionBlock(decision) : ''}
  ${execution ? loopDetails(execution) : ''}
  ${audit ? auditBlock(audit) : ''}
  ${auditLoop && auditLoop.tools.length > 0 ? loopDetails(auditLoop) : ''}
  ${round.violations.map((v) => html`<p class="bad">Integrity violation: changed ${fileList(v.changedPaths)}; records made untrusted: ${v.records.join(', ')}</p>`)}
  ${state ? stateTable(state, before) : ''}
</details>`;
}

function decisionBlock(decision: NonNullable<RoundView['decision']>): SafeHtml {
  const contract = decision.contract;
  return html`<div class="decision">
  <p>Manager decided <b>${decision.next}</b>${decision.fallback ? ' (fallback: its reply stayed malformed)' : ''}.${decision.reason ? html` ${bounded(decision.reason, TEXT_CHARS)}` : ''}</p>
  ${decision.question ? html`<p>Question: ${bounded(decision.question, TEXT_CHARS)}</p>` : ''}
  ${
    contract
      ? html`<p>Contract: ${bounded(contract.task, TEXT_CHARS)}</p>
  <ul>${contract.acceptanceCriteria.map((c) => html`<li>accept: ${bounded(c, TEXT_CHARS)}</li>`)}${contract.boundaries.map((b) => html`<li>boundary: ${bounded(b, TEXT_CHARS)}</li>`)}</ul>`
      : ''
  }
</div>`;
}

function auditBlock(audit: NonNullable<RoundView['audit']>): SafeHtml {
  return html`<div class="audit">
  <p>Audit: <span class="badge s-${audit.status}">${audit.status}</span> integrity <span class="badge s-${audit.integrity}">${audit.integrity}</span>${audit.fallback ? ' (fallback: its reply stayed malformed)' : ''}${audit.changedPaths.length > 0 ? html`; changed during the audit: ${fileList(audit.changedPaths)}` : ''}</p>
  ${
    audit.findings.length > 0
      ? html`<table class="findings"><thead><tr><th>Record</th><th>Check</th><th>Observed</th><th>Verdict</th></tr></thead><tbody>${audit.findings.map(
          (f) =>
            html`<tr class="${f.verdict === 'fail' ? 'bad' : ''}"><td>${f.recordId ?? '—'}</td><td>${bounded(f.check, TEXT_CHARS)}</td><td><pre>${bounded(f.observed, TEXT_CHARS)}</pre></td><td>${f.verdict}</td></tr>`,
        )}</tbody></table>`
      : ''
  }
</div>`;
}

function stateTable(state: TaskState, before: TaskState | undefined): SafeHtml {
  const was = new Map<string, TaskRecord>((before?.records ?? []).map((r) => [r.id, r]));
  return html`<table class="state"><caption>Task state after round ${state.round}</caption>
  <thead><tr><th>Record</th><th>Status</th><th>Evidence</th></tr></thead>
  <tbody>${state.records.map((record) => {
    const old = was.get(record.id)?.status;
    const change = old === undefined ? ' (new)' : old !== record.status ? ` (was ${old})` : '';
    const last = record.evidence.at(-1);
    return html`<tr data-record="${record.id}" data-status="${record.status}"><td><code>${record.id}</code> ${bounded(record.description, TEXT_CHARS)}</td><td><span class="badge s-${record.status}">${record.status}</span>${change}${record.reason ? html`<br>${bounded(record.reason, TEXT_CHARS)}` : ''}</td><td>${last ? html`${record.evidence.length} finding(s); last: ${last.verdict} — ${bounded(last.check, TEXT_CHARS)}: ${bounded(last.observed, TEXT_CHARS)}` : 'none'}</td></tr>`;
  })}</tbody></table>`;
}
