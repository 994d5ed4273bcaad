/**
 * Which backend a role's calls go to, as the options say: one rule for the run's wiring and the checks of
 * `createHarness`.
 * @module
 * @internal
 */
import type { LlmBackend, Purpose } from '../../backend/types.js';

/** The options that choose the backends. */
export interface BackendChoice {
  backend: LlmBackend;
  roles: Partial<Record<Purpose, LlmBackend>>;
}

/**
 * The backend of a role: `roles[role]`, else the main backend. Verification falls back to `roles.vision` before the
 * main backend, because it is sent the delivered images.
 */
export function backendOfRole(choice: BackendChoice, role: Purpose): LlmBackend {
  return choice.roles[role] ?? (role === 'verify' ? choice.roles.vision : undefined) ?? choice.backend;
}
