/**
 * Picks a real backend from the environment, if one is configured.
 * @module
 */
import { anthropic, openAICompatible, type LlmBackend } from 'horizon-harness';

/** `openAICompatible` with OPENAI_API_KEY, else `anthropic` with ANTHROPIC_API_KEY, else undefined. */
export function backendFromEnv(): { backend: LlmBackend; label: string } | undefined {
  const model = process.env.HARNESS_MODEL;
  if (process.env.OPENAI_API_KEY) {
    const baseURL = process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1';
    const backend = openAICompatible({ baseURL, apiKey: process.env.OPENAI_API_KEY, model: model ?? 'gpt-4o-mini' });
    return { backend, label: `${backend.provider} ${backend.modelId} at ${baseURL}` };
  }
  if (process.env.ANTHROPIC_API_KEY) {
    const backend = anthropic({ apiKey: process.env.ANTHROPIC_API_KEY, model: model ?? 'claude-sonnet-4-5' });
    return { backend, label: `anthropic ${backend.modelId}` };
  }
  return undefined;
}
