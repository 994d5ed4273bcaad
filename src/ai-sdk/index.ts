/**
 * `horizon-harness/ai-sdk`: any AI SDK language model (`LanguageModelV3` or `LanguageModelV2`) as the harness's
 * backend. Needs the optional peer dependency `@ai-sdk/provider` (types only). See docs/backends.md, "AI SDK models".
 * @packageDocumentation
 */
export { aiSdkBackend, type AiSdkLanguageModel } from './backend.js';
export { AiSdkBackendOptionsSchema, type AiSdkBackendOptions } from './options.js';
