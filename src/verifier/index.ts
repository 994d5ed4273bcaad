/** The verifier role. @module */
export { Verifier, type VerifierOptions } from './verifier.js';
export type { SubtaskAnswer, VerifierLike, VerifyInput } from '../pipeline/components.js';
