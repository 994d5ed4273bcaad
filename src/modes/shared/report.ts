/**
 * The run report, computed from the events of one run.
 * @module
 */
import type { Usage } from '../../backend/types.js';
import type { HarnessEvent, LlmResponseEvent } from '../../events.js';
import { SUBMIT_ANSWER_TOOL } from '../../prompts/executor.js';
import type { PurposeUsage, RunReport, SubtaskRecord, Verdict, WriteConflict } from '../../contracts/work.js';

/**
 * The counters of a run's report that its events decide, folded one event at a time. Plain JSON, so a run can carry
 * it in a snapshot instead of its whole event log.
 */
export type ReportTally = Omit<
  RunReport,
  | 'wallTimeMs'
  | 'subtasks'
  | 'subtaskAttempts'
  | 'failedSubtasks'
  | 'firstPassVerified'
  | 'repairRecovered'
  | 'writeConflicts'
>;

/** A tally of no events. */
export function newReportTally(): ReportTally {
  return {
    modelCalls: 0,
    inputTokens: 0,
    outputTokens: 0,
    byPurpose: {},
    toolCalls: 0,
    toolCallsByTool: {},
    peakRequestTokens: 0,
    repairs: 0,
    truncations: 0,
    compressions: 0,
    prunes: 0,
    cacheBreaks: {},
    warnings: {},
    resumes: { count: 0, redoneModelCalls: 0, rerunToolCalls: 0, interruptedToolCalls: 0 },
    cost: null,
  };
}

/** Adds one event to `tally`. */
export function tallyEvent(tally: ReportTally, event: HarnessEvent): void {
  switch (event.type) {
    case 'llm-request':
      tally.peakRequestTokens = Math.max(tally.peakRequestTokens, event.requestTokens);
      break;
    case 'llm-response': {
      tallyCost(tally, event);
      const usage: PurposeUsage = tally.byPurpose[event.purpose] ?? { calls: 0, inputTokens: 0, outputTokens: 0 };
      usage.calls += 1;
      usage.inputTokens += event.usage.inputTokens;
      usage.outputTokens += event.usage.outputTokens;
      tallyCache(usage, event.usage);
      tally.byPurpose[event.purpose] = usage;
      tally.modelCalls += 1;
      tally.inputTokens += event.usage.inputTokens;
      tally.outputTokens += event.usage.outputTokens;
      break;
    }
    case 'tool-call':
      // Ending a loop is not work on the environment; counting it would inflate every configuration alike.
      if (event.toolName === SUBMIT_ANSWER_TOOL) break;
      tally.toolCalls += 1;
      tally.toolCallsByTool[event.toolName] = (tally.toolCallsByTool[event.toolName] ?? 0) + 1;
      break;
    case 'repair-start':
      tally.repairs += 1;
      break;
    case 'memory-truncate':
      tally.truncations += 1;
      break;
    case 'memory-compress':
      tally.compressions += 1;
      break;
    case 'memory-prune':
      tally.prunes += 1;
      break;
    case 'cache-break': {
      // `??=`: a tally saved before cache breaks were counted has no such field.
      tally.cacheBreaks ??= {};
      const counted = tally.cacheBreaks[event.cause] ?? { count: 0, prefixTokensLost: 0 };
      counted.count += 1;
      counted.prefixTokensLost += event.prefixTokensLost;
      tally.cacheBreaks[event.cause] = counted;
      break;
    }
    case 'run-warning':
      tally.warnings[event.code] = (tally.warnings[event.code] ?? 0) + 1;
      break;
    case 'run-resume':
      tally.resumes.count += 1;
      tally.resumes.redoneModelCalls += event.redo.modelCalls;
      tally.resumes.rerunToolCalls += event.redo.rerunToolCalls.length;
      tally.resumes.interruptedToolCalls += event.redo.interruptedToolCalls.length;
      break;
    default:
      break;
  }
}

/**
 * Adds a call's cache reads and writes to its purpose's usage, and the purpose's hit ratio. The fields appear with
 * the first call that reports either figure, so a provider that says nothing about caching is not shown a 0 % hit
 * ratio it never reported.
 */
function tallyCache(usage: PurposeUsage, call: Usage): void {
  const reported = call.cachedInputTokens !== undefined || call.cacheWriteInputTokens !== undefined;
  if (!reported && usage.cachedInputTokens === undefined) return;
  usage.cachedInputTokens = (usage.cachedInputTokens ?? 0) + (call.cachedInputTokens ?? 0);
  usage.cacheWriteInputTokens = (usage.cacheWriteInputTokens ?? 0) + (call.cacheWriteInputTokens ?? 0);
  usage.cacheHitRatio = usage.inputTokens > 0 ? usage.cachedInputTokens / usage.inputTokens : 0;
}

/**
 * Adds a call's cost, before the call itself is counted in `modelCalls`. The first priced call names the report's
 * currency, and the calls before it count as unpriced; so does a call priced in another currency, which a sum in one
 * currency cannot hold (createHarness refuses mixed currencies; only a component's own backend can bring one).
 */
function tallyCost(tally: ReportTally, event: LlmResponseEvent): void {
  const { cost: amount, currency } = event;
  // `??=`, not `=== null`: a tally saved before cost was counted has no `cost` field.
  if (amount === undefined || currency === undefined) {
    if (tally.cost) tally.cost.unpricedCalls += 1;
    return;
  }
  tally.cost ??= { currency, total: 0, byPurpose: {}, unpricedCalls: tally.modelCalls };
  if (currency !== tally.cost.currency) {
    tally.cost.unpricedCalls += 1;
    return;
  }
  tally.cost.total += amount;
  tally.cost.byPurpose[event.purpose] = (tally.cost.byPurpose[event.purpose] ?? 0) + amount;
}

/** The facts of a report that are not counted from events. */
export interface ReportFacts {
  wallTimeMs: number;
  subtasks: readonly SubtaskRecord[];
  verdicts: readonly Verdict[];
}

/** The {@link RunReport} of a run from its tally, subtask records and verdicts. */
export function reportFromTally(tally: ReportTally, facts: ReportFacts): RunReport {
  const counted = structuredClone(tally);
  const report: RunReport = {
    wallTimeMs: facts.wallTimeMs,
    ...counted,
    cost: counted.cost ?? null,
    // A tally saved before cache breaks were counted has none.
    cacheBreaks: counted.cacheBreaks ?? {},
    subtasks: facts.subtasks.length,
    subtaskAttempts: facts.subtasks.reduce((sum, s) => sum + s.attempts, 0),
    failedSubtasks: facts.subtasks.filter((s) => s.status === 'failed').length,
    firstPassVerified: null,
    repairRecovered: null,
    writeConflicts: mergeWriteConflicts(facts.subtasks.flatMap((s) => s.writeConflicts ?? [])),
  };
  const first = facts.verdicts[0];
  // An unparseable verdict says nothing about the deliverable, so it is neither a pass nor a fail.
  if (first && first.status !== 'unverified') report.firstPassVerified = first.passed;
  const last = facts.verdicts.at(-1);
  // After a repair, only a verdict says whether it recovered the deliverable; without one nothing is known.
  if (report.repairs > 0 && last && last.status !== 'unverified') report.repairRecovered = last.passed;
  return report;
}

/** Builds the {@link RunReport} of a run from its events, subtask records and verdicts. */
export function buildReport(events: readonly HarnessEvent[], facts: ReportFacts): RunReport {
  const tally = newReportTally();
  for (const event of events) tallyEvent(tally, event);
  return reportFromTally(tally, facts);
}

/** The write conflicts of several records, one per path, with every writer named. @internal */
export function mergeWriteConflicts(conflicts: readonly WriteConflict[]): WriteConflict[] {
  const byPath = new Map<string, string[]>();
  for (const { path, writers } of conflicts) {
    const known = (byPath.get(path) ?? []).filter((id) => !writers.includes(id));
    byPath.set(path, [...known, ...writers]);
  }
  return [...byPath].map(([path, writers]) => ({ path, writers }));
}
