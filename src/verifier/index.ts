/** The verifier role. @module */
export { Verifier, type SubtaskAnswer, type VerifierLike, type VerifierOptions, type VerifyInput } from './verifier.js';
