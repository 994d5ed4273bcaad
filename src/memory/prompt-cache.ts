import type { LlmBackend } from '../backend/types.js';

/**
 * Whether `backend`'s provider caches prompt prefixes (`promptCache.mode` `automatic` or `markers`); a backend that
 * does not say is taken not to. Only then is a stable prefix worth keeping at the price of a longer request.
 */
export function cachesPrompts(backend: LlmBackend): boolean {
  const mode = backend.promptCache?.mode;
  return mode === 'automatic' || mode === 'markers';
}
