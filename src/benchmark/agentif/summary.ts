/**
 * The paper's Tables 2–3 computed from the pair records: score per configuration, overall and by slice, and the
 * harness-behaviour metrics of each configuration's runs.
 * @module
 */
import type { AblationConfig, AblationConfigName } from './configs.js';
import type { PairRecord } from './pair-record.js';

/** Mean scores of one configuration by slice; a slice with no task is absent. */
export interface SliceScores {
  /** Tasks without / with input attachments (the paper's w/o and w/ columns). */
  attachments: { without?: number; with?: number };
  /** By the records' optional `domain` field. */
  domain: Record<string, number>;
  /** By the records' optional `task_type` field. */
  taskType: Record<string, number>;
}

/** One configuration's row: means are per task over the tasks judged in that configuration. */
export interface ConfigSummary {
  config: AblationConfigName;
  /** Tasks judged. */
  tasks: number;
  /** Mean task score in [0, 1]: the benchmark score. */
  score: number;
  /** Tasks with score 1. */
  perfect: number;
  /** Tasks scoring higher than FULL on the same task (null for FULL itself, or when FULL was not run). */
  betterThanFull: number | null;
  minutesPerTask: number;
  /** Score in percentage points per minute of mean latency (the paper's Score / Lat.). */
  scorePerMinute: number | null;
  modelCalls: number;
  toolCalls: number;
  /** Input + output tokens. */
  tokens: number;
  /** Tasks that reached verification, and those that passed it the first time. */
  verified: number;
  firstPassVerified: number;
  /** Tasks that entered repair, and those whose repair recovered (passed verification afterwards). */
  repaired: number;
  recovered: number;
  /** Tasks that triggered context compression at least once, and all compressions. */
  compressedTasks: number;
  compressions: number;
  /**
   * Runs that did not succeed (their partial deliverable was still judged), `unverified` ones included: their status
   * does not claim the deliverable meets the request, so they are not counted as successes.
   */
  failedRuns: number;
  /** The runs of {@link ConfigSummary.failedRuns} that ended `unverified` (no usable verdict; deliverable kept). */
  unverifiedRuns: number;
  /** Criteria left unjudged (counted as not satisfied). */
  unjudgedCriteria: number;
  slices: SliceScores;
}

/** Summarises the complete records of each configuration in `configs` (in that order). */
export function summarize(configs: readonly AblationConfig[], records: readonly PairRecord[]): ConfigSummary[] {
  const full = new Map(records.filter((r) => r.config === 'FULL').map((r) => [r.taskId, r.score?.score ?? 0]));
  return configs.map(({ name }) => {
    const rows = records.filter((r) => r.config === name);
    const n = rows.length;
    const mean = (value: (r: PairRecord) => number) => (n ? rows.reduce((s, r) => s + value(r), 0) / n : 0);
    const count = (test: (r: PairRecord) => boolean) => rows.filter(test).length;
    const scoreOf = (r: PairRecord) => r.score?.score ?? 0;
    const score = mean(scoreOf);
    const minutes = mean((r) => r.run.report.wallTimeMs / 60_000);
    const compared = rows.filter((r) => full.has(r.taskId));
    return {
      config: name,
      tasks: n,
      score,
      perfect: count((r) => scoreOf(r) === 1),
      betterThanFull:
        name === 'FULL' || full.size === 0
          ? null
          : compared.filter((r) => scoreOf(r) > (full.get(r.taskId) ?? 0)).length,
      minutesPerTask: minutes,
      scorePerMinute: minutes > 0 ? (score * 100) / minutes : null,
      modelCalls: mean((r) => r.run.report.modelCalls),
      toolCalls: mean((r) => r.run.report.toolCalls),
      tokens: mean((r) => r.run.report.inputTokens + r.run.report.outputTokens),
      verified: count((r) => r.run.report.firstPassVerified !== null),
      firstPassVerified: count((r) => r.run.report.firstPassVerified === true),
      repaired: count((r) => r.run.report.repairs > 0),
      recovered: count((r) => r.run.report.repairRecovered === true),
      compressedTasks: count((r) => r.run.report.compressions > 0),
      compressions: rows.reduce((s, r) => s + r.run.report.compressions, 0),
      failedRuns: count((r) => r.run.status !== 'succeeded'),
      unverifiedRuns: count((r) => r.run.status === 'unverified'),
      unjudgedCriteria: rows.reduce(
        (s, r) => s + (r.judgement?.criteria.filter((c) => c.satisfied === null).length ?? 0),
        0,
      ),
      slices: slices(rows, scoreOf),
    };
  });
}

function slices(rows: readonly PairRecord[], scoreOf: (r: PairRecord) => number): SliceScores {
  const meanBy = (key: (r: PairRecord) => string | undefined): Record<string, number> => {
    const groups = new Map<string, number[]>();
    for (const row of rows) {
      const value = key(row);
      if (value !== undefined) groups.set(value, [...(groups.get(value) ?? []), scoreOf(row)]);
    }
    return Object.fromEntries(
      [...groups].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, v.reduce((s, x) => s + x, 0) / v.length]),
    );
  };
  const byAttachment = meanBy((r) => (r.hasAttachments ? 'with' : 'without'));
  return {
    attachments: {
      ...(byAttachment.without !== undefined ? { without: byAttachment.without } : {}),
      ...(byAttachment.with !== undefined ? { with: byAttachment.with } : {}),
    },
    domain: meanBy((r) => r.domain),
    taskType: meanBy((r) => r.taskType),
  };
}
