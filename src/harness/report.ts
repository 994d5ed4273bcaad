/**
 * The run report, computed from the events of one run.
 * @module
 */
import type { HarnessEvent } from '../events.js';
import { SUBMIT_ANSWER_TOOL } from '../prompts/executor.js';
import type { PurposeUsage, RunReport, SubtaskRecord, Verdict } from '../pipeline/types.js';

/** Builds the {@link RunReport} of a run from its events, subtask records and verdicts. */
export function buildReport(
  events: readonly HarnessEvent[],
  facts: { wallTimeMs: number; subtasks: readonly SubtaskRecord[]; verdicts: readonly Verdict[] },
): RunReport {
  const report: RunReport = {
    wallTimeMs: facts.wallTimeMs,
    modelCalls: 0,
    inputTokens: 0,
    outputTokens: 0,
    byPurpose: {},
    toolCalls: 0,
    toolCallsByTool: {},
    peakRequestTokens: 0,
    subtasks: facts.subtasks.length,
    subtaskAttempts: facts.subtasks.reduce((sum, s) => sum + s.attempts, 0),
    failedSubtasks: facts.subtasks.filter((s) => s.status === 'failed').length,
    firstPassVerified: null,
    repairs: 0,
    repairRecovered: null,
    truncations: 0,
    compressions: 0,
    prunes: 0,
    warnings: {},
  };
  for (const event of events) {
    switch (event.type) {
      case 'llm-request':
        report.peakRequestTokens = Math.max(report.peakRequestTokens, event.requestTokens);
        break;
      case 'llm-response': {
        const usage: PurposeUsage = report.byPurpose[event.purpose] ?? { calls: 0, inputTokens: 0, outputTokens: 0 };
        usage.calls += 1;
        usage.inputTokens += event.usage.inputTokens;
        usage.outputTokens += event.usage.outputTokens;
        report.byPurpose[event.purpose] = usage;
        report.modelCalls += 1;
        report.inputTokens += event.usage.inputTokens;
        report.outputTokens += event.usage.outputTokens;
        break;
      }
      case 'tool-call':
        // Ending a loop is not work on the environment; counting it would inflate every configuration alike.
        if (event.toolName === SUBMIT_ANSWER_TOOL) break;
        report.toolCalls += 1;
        report.toolCallsByTool[event.toolName] = (report.toolCallsByTool[event.toolName] ?? 0) + 1;
        break;
      case 'repair-start':
        report.repairs += 1;
        break;
      case 'memory-truncate':
        report.truncations += 1;
        break;
      case 'memory-compress':
        report.compressions += 1;
        break;
      case 'memory-prune':
        report.prunes += 1;
        break;
      case 'run-warning':
        report.warnings[event.code] = (report.warnings[event.code] ?? 0) + 1;
        break;
      default:
        break;
    }
  }
  const first = facts.verdicts[0];
  // An unparseable verdict says nothing about the deliverable, so it is neither a pass nor a fail.
  if (first && first.status !== 'unverified') report.firstPassVerified = first.passed;
  const last = facts.verdicts.at(-1);
  if (report.repairs > 0 && last) report.repairRecovered = last.passed;
  return report;
}
