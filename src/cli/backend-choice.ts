/**
 * Picks the run's model backend from the command-line flags and the environment.
 * @module
 */
import { anthropic } from '../backend/anthropic.js';
import { openAICompatible } from '../backend/openai-compatible.js';
import type { LlmBackend } from '../backend/types.js';
import { HarnessError } from '../errors.js';

/** The backend flags of `horizon-harness run`. */
export interface BackendFlags {
  model?: string;
  baseUrl?: string;
  anthropic?: boolean;
  /** The environment variable holding the API key, instead of OPENAI_API_KEY / ANTHROPIC_API_KEY. */
  apiKeyEnv?: string;
  /** Stream model calls (SSE), so the agent's text shows as it arrives; `--no-stream` turns it off. */
  stream: boolean;
}

/** A configured backend and how to name it to the user (never with its key). */
export interface ChosenBackend {
  backend: LlmBackend;
  label: string;
}

const OPENAI_BASE_URL = 'https://api.openai.com/v1';
const OPENAI_MODEL = 'gpt-4o-mini';
const ANTHROPIC_MODEL = 'claude-sonnet-4-5';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * `--anthropic` → Anthropic; `--base-url` → that OpenAI-compatible server (the key is optional there: local servers
 * need none); otherwise the environment, as `npm run demo` reads it: OPENAI_API_KEY (+ OPENAI_BASE_URL), else
 * ANTHROPIC_API_KEY. The model is `--model`, else HARNESS_MODEL, else the provider's default. Throws an
 * `invalid-options` HarnessError (a usage error) when no backend can be configured.
 */
export function chooseBackend(flags: BackendFlags, env: Env): ChosenBackend {
  const read = (name: string): string | undefined => (env[name]?.trim() ? env[name] : undefined);
  const model = flags.model ?? read('HARNESS_MODEL');
  if (flags.apiKeyEnv !== undefined && !read(flags.apiKeyEnv)) {
    throw usage(
      `--api-key-env names ${flags.apiKeyEnv}, but that environment variable is empty or unset. Export the key in it.`,
    );
  }
  if (flags.anthropic) {
    const keyName = flags.apiKeyEnv ?? 'ANTHROPIC_API_KEY';
    const apiKey = read(keyName);
    if (!apiKey)
      throw usage(`--anthropic needs an API key: set ${keyName} (or name another variable with --api-key-env).`);
    const backend = anthropic({ apiKey, model: model ?? ANTHROPIC_MODEL, stream: flags.stream });
    return { backend, label: `anthropic ${backend.modelId}` };
  }
  if (flags.baseUrl !== undefined) {
    if (!model) throw usage('--base-url needs a model: pass --model NAME (or set HARNESS_MODEL).');
    return openAI(flags.baseUrl, read(flags.apiKeyEnv ?? 'OPENAI_API_KEY'), model, flags.stream);
  }
  const openAIKey = read(flags.apiKeyEnv ?? 'OPENAI_API_KEY');
  if (openAIKey)
    return openAI(read('OPENAI_BASE_URL') ?? OPENAI_BASE_URL, openAIKey, model ?? OPENAI_MODEL, flags.stream);
  const anthropicKey = flags.apiKeyEnv === undefined ? read('ANTHROPIC_API_KEY') : undefined;
  if (anthropicKey) {
    const backend = anthropic({ apiKey: anthropicKey, model: model ?? ANTHROPIC_MODEL, stream: flags.stream });
    return { backend, label: `anthropic ${backend.modelId}` };
  }
  throw usage(
    'No model configured. Set OPENAI_API_KEY (and OPENAI_BASE_URL for another compatible server) or ANTHROPIC_API_KEY, ' +
      'or pass --base-url URL --model NAME for a local server. `horizon-harness replay` runs an offline demo without a key.',
  );
}

function openAI(baseURL: string, apiKey: string | undefined, model: string, stream: boolean): ChosenBackend {
  const backend = openAICompatible({ baseURL, model, stream, ...(apiKey ? { apiKey } : {}) });
  return { backend, label: `${backend.provider} ${backend.modelId} at ${withoutCredentials(baseURL)}` };
}

/** The URL as printed: user info (a key some proxies take in the URL) left out. */
function withoutCredentials(baseURL: string): string {
  const url = new URL(baseURL);
  url.username = '';
  url.password = '';
  return url.href.replace(/\/+$/, '');
}

function usage(message: string): HarnessError {
  return new HarnessError('invalid-options', message);
}
