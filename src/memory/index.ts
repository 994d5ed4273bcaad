/**
 * Execution memory: bounded observations, context compression and emergency pruning.
 * @module
 */
export { ageObservations, isAged } from './aging.js';
export {
  emergencyPrune,
  isPrunedOutput,
  planCompression,
  prunedToolMessage,
  type CompressionPlan,
  type PruneResult,
} from './fit.js';
export { MemoryManager, OUTPUTS_DIR } from './memory-manager.js';
export {
  MemoryOptionsSchema,
  parseMemoryOptions,
  type MemoryManagerOptions,
  type ResolvedMemoryOptions,
} from './options.js';
export { isModelRound, splitRounds, type DialogueRounds } from './rounds.js';
export { historySummaryPrompt, pageSummaryPrompt, renderTranscript, SUMMARY_HEADER } from './summary-prompt.js';
export {
  IMAGE_TOKENS,
  MESSAGE_OVERHEAD_TOKENS,
  REQUEST_OVERHEAD_TOKENS,
  TOOL_CALL_OVERHEAD_TOKENS,
  TOOL_SPEC_OVERHEAD_TOKENS,
  TokenCounter,
} from './token-counter.js';
export {
  GPT_ENCODINGS,
  gptTokenizer,
  MAX_TOKENIZED_CHARS,
  type GptEncodingName,
  type Tokenizer,
  warmUpTokenizer,
} from './tokenizer.js';
export type { TextCount } from './bounded-count.js';
export { headTail, searchSnippets } from './truncate.js';
export type { ExecutionMemory, MemoryScope, PendingRequest } from './types.js';
