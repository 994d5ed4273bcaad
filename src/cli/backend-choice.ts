/**
 * Picks the run's model backend from the command-line flags and the environment.
 * @module
 */
import { anthropic } from '../backend/anthropic.js';
import { openAICompatible } from '../backend/openai-compatible.js';
import type { LlmBackend } from '../backend/types.js';
import { HarnessError } from '../errors.js';
import { DEMO_SCENARIO } from '../testing/demo-scenario.js';
import { replayBackend } from '../testing/replay-backend.js';

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

/**
 * Which backend a CLI run uses, without its key: what `.harness/cli.json` records so that `resume` builds the same
 * backend again. The key is read from the environment variable named here, never stored.
 */
export type BackendRecipe =
  | { kind: 'openai-compatible'; baseURL: string; model: string; apiKeyEnv?: string | undefined; stream: boolean }
  | { kind: 'anthropic'; model: string; apiKeyEnv: string; stream: boolean }
  | { kind: 'replay' };

/** A configured backend and how to name it to the user (never with its key). */
export interface ChosenBackend {
  backend: LlmBackend;
  label: string;
  /** How to build it again; absent for a backend from code (`bench --backend-module`), which `resume` cannot rebuild. */
  recipe?: BackendRecipe;
}

const OPENAI_BASE_URL = 'https://api.openai.com/v1';
const OPENAI_MODEL = 'gpt-4o-mini';
const ANTHROPIC_MODEL = 'claude-sonnet-4-5';

type Env = Readonly<Record<string, string | undefined>>;

const readEnv =
  (env: Env) =>
  (name: string): string | undefined =>
    env[name]?.trim() ? env[name] : undefined;

/**
 * `--anthropic` → Anthropic; `--base-url` → that OpenAI-compatible server (the key is optional there: local servers
 * need none); otherwise the environment, as `npm run demo` reads it: OPENAI_API_KEY (+ OPENAI_BASE_URL), else
 * ANTHROPIC_API_KEY. The model is `--model`, else HARNESS_MODEL, else the provider's default. Throws an
 * `invalid-options` HarnessError (a usage error) when no backend can be configured.
 */
export function chooseBackend(flags: BackendFlags, env: Env): ChosenBackend {
  return backendOf(recipeOf(flags, env), env);
}

/** The recipe the flags and the environment pick; see {@link chooseBackend}. */
function recipeOf(flags: BackendFlags, env: Env): BackendRecipe {
  const read = readEnv(env);
  const model = flags.model ?? read('HARNESS_MODEL');
  const stream = flags.stream;
  if (flags.apiKeyEnv !== undefined && !read(flags.apiKeyEnv)) {
    throw usage(
      `--api-key-env names ${flags.apiKeyEnv}, but that environment variable is empty or unset. Export the key in it.`,
    );
  }
  if (flags.anthropic) {
    const apiKeyEnv = flags.apiKeyEnv ?? 'ANTHROPIC_API_KEY';
    if (!read(apiKeyEnv))
      throw usage(`--anthropic needs an API key: set ${apiKeyEnv} (or name another variable with --api-key-env).`);
    return { kind: 'anthropic', model: model ?? ANTHROPIC_MODEL, apiKeyEnv, stream };
  }
  if (flags.baseUrl !== undefined) {
    if (!model) throw usage('--base-url needs a model: pass --model NAME (or set HARNESS_MODEL).');
    const apiKeyEnv = flags.apiKeyEnv ?? 'OPENAI_API_KEY';
    return { kind: 'openai-compatible', baseURL: flags.baseUrl, model, apiKeyEnv, stream };
  }
  const openAIKeyEnv = flags.apiKeyEnv ?? 'OPENAI_API_KEY';
  if (read(openAIKeyEnv)) {
    const baseURL = read('OPENAI_BASE_URL') ?? OPENAI_BASE_URL;
    return { kind: 'openai-compatible', baseURL, model: model ?? OPENAI_MODEL, apiKeyEnv: openAIKeyEnv, stream };
  }
  if (flags.apiKeyEnv === undefined && read('ANTHROPIC_API_KEY'))
    return { kind: 'anthropic', model: model ?? ANTHROPIC_MODEL, apiKeyEnv: 'ANTHROPIC_API_KEY', stream };
  throw usage(
    'No model configured. Set OPENAI_API_KEY (and OPENAI_BASE_URL for another compatible server) or ANTHROPIC_API_KEY, ' +
      'or pass --base-url URL --model NAME for a local server. `horizon-harness replay` runs an offline demo without a key.',
  );
}

/**
 * The backend a recipe describes, its key read from the environment variable it names (`resume` builds the backend
 * of the run it goes on with this way). Throws `invalid-options` when Anthropic's key variable is empty.
 */
export function backendOf(recipe: BackendRecipe, env: Env): ChosenBackend {
  const read = readEnv(env);
  switch (recipe.kind) {
    case 'replay':
      return {
        backend: replayBackend(DEMO_SCENARIO),
        label: 'replay backend (offline, scripted answers)',
        recipe,
      };
    case 'anthropic': {
      const apiKey = read(recipe.apiKeyEnv);
      if (!apiKey) throw usage(`This run uses Anthropic: set its API key in ${recipe.apiKeyEnv}.`);
      const backend = anthropic({ apiKey, model: recipe.model, stream: recipe.stream });
      return { backend, label: `anthropic ${backend.modelId}`, recipe };
    }
    case 'openai-compatible': {
      const apiKey = recipe.apiKeyEnv ? read(recipe.apiKeyEnv) : undefined;
      const { baseURL, model, stream } = recipe;
      const backend = openAICompatible({ baseURL, model, stream, ...(apiKey ? { apiKey } : {}) });
      return { backend, label: `${backend.provider} ${backend.modelId} at ${withoutCredentials(baseURL)}`, recipe };
    }
  }
}

/** The URL as printed and recorded: user info (a key some proxies take in the URL) left out. */
export function withoutCredentials(baseURL: string): string {
  const url = new URL(baseURL);
  url.username = '';
  url.password = '';
  return url.href.replace(/\/+$/, '');
}

function usage(message: string): HarnessError {
  return new HarnessError('invalid-options', message);
}
