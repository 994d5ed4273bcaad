/**
 * Benchmark runners, exported as `horizon-harness/benchmark`: AgentIF-OneDay, the benchmark of the OneDayAgent paper
 * (load the tasks, run the ablation configurations, judge every criterion, score, tabulate).
 * @packageDocumentation
 */
export { ABLATION_CONFIGS, selectConfigs, type AblationConfig, type AblationConfigName } from './agentif/configs.js';
export {
  AgentIfTaskSchema,
  loadAgentIfDataset,
  parseAgentIfJsonl,
  type AgentIfTask,
  type LoadAgentIfDatasetOptions,
  type LoadedAgentIfTask,
  type TaskFile,
} from './agentif/dataset.js';
export {
  JudgeReplySchema,
  judgeDeliverable,
  needsDeliveredFile,
  type CriterionJudgement,
  type TaskJudgement,
} from './agentif/judge.js';
export { buildJudgeMessages, formatCriteria, type JudgeMaterial } from './agentif/judge-prompt.js';
export {
  JUDGE_MATERIAL_LIMITS,
  parseAnswerFiles,
  parseTaskFiles,
  type AnswerMaterial,
  type JudgeMaterialLimits,
  type ParsedFile,
} from './agentif/judge-material.js';
export { outLayout, PAIR_FORMAT, type OutLayout, type PairRecord } from './agentif/pair-record.js';
export {
  runAgentIfBenchmark,
  type AgentIfBenchmarkOptions,
  type AgentIfResults,
  type BenchmarkPair,
  type BenchmarkProgress,
} from './agentif/runner.js';
export { scoreTask, type ScoredCriterion, type TaskScore } from './agentif/score.js';
export { summarize, type ConfigSummary, type SliceScores } from './agentif/summary.js';
export { renderTable } from './agentif/table.js';
export type { PreparedImage } from '../verifier/images.js';
