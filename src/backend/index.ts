/**
 * The backend contract and the shipped adapters.
 * @module
 */
export type {
  ContentPart,
  FinishReason,
  GenerateRequest,
  GenerateResult,
  LlmBackend,
  Message,
  PromptCacheCapability,
  Purpose,
  RetryNotice,
  StreamPart,
  ToolCall,
  ToolSpec,
  Usage,
} from './types.js';
export { openAICompatible, OpenAICompatibleOptionsSchema, type OpenAICompatibleOptions } from './openai-compatible.js';
export { anthropic, AnthropicOptionsSchema, ANTHROPIC_VERSION, type AnthropicOptions } from './anthropic.js';
export { RetryOptionsSchema } from './options.js';
