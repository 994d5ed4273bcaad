/**
 * The paper's ablation configurations (Table 3): decomposition and verification switched on and off.
 * @module
 */
import { HarnessError } from '../../errors.js';

/** The name of an ablation configuration. */
export type AblationConfigName = 'DIRECT' | 'DECOMP' | 'VERIFY' | 'FULL';

/** What a configuration switches. Execution memory stays on in all of them, as in the paper. */
export interface AblationConfig {
  name: AblationConfigName;
  decomposition: boolean;
  verification: boolean;
}

/** DIRECT (neither), DECOMP (decomposition only), VERIFY (verification and repair only), FULL (both). */
export const ABLATION_CONFIGS: readonly AblationConfig[] = [
  { name: 'DIRECT', decomposition: false, verification: false },
  { name: 'DECOMP', decomposition: true, verification: false },
  { name: 'VERIFY', decomposition: false, verification: true },
  { name: 'FULL', decomposition: true, verification: true },
];

/** The configurations named in `names` (case-insensitive), in the paper's order; an unknown name is `invalid-input`. */
export function selectConfigs(names: readonly string[]): AblationConfig[] {
  const wanted = new Set(names.map((name) => name.trim().toUpperCase()).filter(Boolean));
  const unknown = [...wanted].filter((name) => !ABLATION_CONFIGS.some((config) => config.name === name));
  if (unknown.length || wanted.size === 0) {
    throw new HarnessError(
      'invalid-input',
      `Unknown configuration(s) ${unknown.join(', ') || '(none given)'}. ` +
        `Choose from ${ABLATION_CONFIGS.map((c) => c.name).join(', ')}.`,
    );
  }
  return ABLATION_CONFIGS.filter((config) => wanted.has(config.name));
}
