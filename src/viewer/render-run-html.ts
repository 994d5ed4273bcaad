/**
 * `renderRunHtml`: a run's events, or its event log, as one self-contained HTML page.
 * @module
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULTS } from '../defaults.js';
import { readEventLog } from '../event-log/read.js';
import { HarnessError } from '../errors.js';
import type { HarnessEvent } from '../events.js';
import { type ChartLimits, contextChart } from './context-chart.js';
import { costSection } from './cost-section.js';
import { headerSection } from './header-section.js';
import { managedSection } from './managed-section.js';
import { pageDocument } from './page.js';
import { buildRunView } from './fold-events.js';
import { timelineSection } from './timeline-section.js';
import { verificationSection } from './verification-section.js';
import { workSection } from './work-section.js';

/** How {@link renderRunHtml} draws the page. */
export interface RenderRunHtmlOptions {
  /**
   * The context window in tokens the chart draws for every call, instead of the window each `llm-request` records.
   * @defaultValue each call's recorded window; 128 000 (the harness's default, said to be assumed) for a call whose
   * log entry has none
   */
  contextWindow?: number;
  /** @defaultValue the run's `memory.compressAt` from its `run-start`, else 0.9 */
  compressAt?: number;
  /** @defaultValue the run's `memory.emergencyAt` from its `run-start`, else 0.95 */
  emergencyAt?: number;
  /** Which run of the log to show, when it holds several. @defaultValue the run of its last event */
  runId?: string;
}

/** The event log of a workspace, relative to it. */
export const EVENT_LOG_PATH = path.join('.harness', 'events.jsonl');

/**
 * Renders a run as one self-contained HTML page: a header (task, status and why, duration, calls, tokens, cost,
 * repairs, warnings), the timeline of its stages and subtasks, the context chart of every model call, each loop's tool
 * calls and hand-off, verdicts with the repairs that followed, managed rounds with audits and task state, and tokens,
 * cost and cache hits by purpose. The page makes no network request, carries a strict Content-Security-Policy, and
 * escapes every text that came from the run.
 *
 * Given the events, it returns the page; given a path (a workspace directory, or an events.jsonl file), it reads the
 * log and resolves with the page.
 * @example
 * ```ts
 * import { renderRunHtml } from 'horizon-harness/viewer';
 * await writeFile('run.html', await renderRunHtml('./work')); // ./work/.harness/events.jsonl
 * ```
 */
export function renderRunHtml(events: readonly HarnessEvent[], options?: RenderRunHtmlOptions): string;
export function renderRunHtml(logOrWorkspace: string, options?: RenderRunHtmlOptions): Promise<string>;
export function renderRunHtml(
  source: readonly HarnessEvent[] | string,
  options: RenderRunHtmlOptions = {},
): string | Promise<string> {
  if (typeof source === 'string') return readRunEvents(source).then((events) => renderEvents(events, options));
  return renderEvents(source, options);
}

/** The events of a workspace's log (`<dir>/.harness/events.jsonl`) or of an events.jsonl file. */
export async function readRunEvents(logOrWorkspace: string): Promise<HarnessEvent[]> {
  const { file } = await locateEventLog(logOrWorkspace);
  const events = await readEventLog(file);
  if (events.length === 0) {
    throw new HarnessError('invalid-input', `The event log "${file}" holds no event: there is no run to show.`);
  }
  return events;
}

/** The log file of a workspace directory or an events.jsonl path, and the workspace when a directory was given. @internal */
export async function locateEventLog(logOrWorkspace: string): Promise<{ file: string; workspace?: string }> {
  const isDirectory = await stat(logOrWorkspace).then(
    (info) => info.isDirectory(),
    () => false,
  );
  return isDirectory
    ? { file: path.join(logOrWorkspace, EVENT_LOG_PATH), workspace: logOrWorkspace }
    : { file: logOrWorkspace };
}

function renderEvents(events: readonly HarnessEvent[], options: RenderRunHtmlOptions): string {
  checkOptions(options);
  if (options.runId !== undefined && !events.some((event) => event.runId === options.runId)) {
    const known = [...new Set(events.map((event) => event.runId))].join(', ');
    throw new HarnessError('invalid-input', `No event of run "${options.runId}" in the log. Runs in it: ${known}.`);
  }
  const view = buildRunView(events, options.runId);
  const logged = view.start?.memory;
  const { contextWindow } = options;
  const limits: ChartLimits = {
    windowOf: (call) => contextWindow ?? call.contextWindow ?? DEFAULTS.contextWindow,
    compressAt: options.compressAt ?? logged?.compressAt ?? DEFAULTS.compressAt,
    emergencyAt: options.emergencyAt ?? logged?.emergencyAt ?? DEFAULTS.emergencyAt,
    windowKnown: contextWindow !== undefined || view.calls.every((call) => call.contextWindow !== undefined),
    thresholdsKnown: logged !== undefined || (options.compressAt !== undefined && options.emergencyAt !== undefined),
  };
  const data = { runId: view.runId, status: view.result?.status ?? null, report: view.result?.report ?? null };
  return pageDocument(
    `${view.result?.status ?? 'run'} · ${view.start?.goal.slice(0, 80) ?? view.runId}`,
    [
      headerSection(view),
      timelineSection(view),
      contextChart(view, limits),
      verificationSection(view),
      managedSection(view),
      workSection(view),
      costSection(view),
    ],
    data,
  );
}

/** Refuses a window or threshold the chart cannot draw. */
function checkOptions(options: RenderRunHtmlOptions): void {
  const { contextWindow, compressAt, emergencyAt } = options;
  if (contextWindow !== undefined && !(Number.isInteger(contextWindow) && contextWindow > 0)) {
    throw new HarnessError(
      'invalid-options',
      `contextWindow (--context-window) takes a whole number of tokens ≥ 1; got ${contextWindow}.`,
    );
  }
  for (const [name, share] of [
    ['compressAt', compressAt],
    ['emergencyAt', emergencyAt],
  ] as const) {
    if (share !== undefined && !(share > 0 && share <= 1)) {
      throw new HarnessError('invalid-options', `${name} takes a share of the window in (0, 1]; got ${share}.`);
    }
  }
}
