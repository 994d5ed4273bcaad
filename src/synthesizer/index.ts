/** The synthesizer role. @module */
export { Synthesizer, type SynthesizerOptions } from './synthesizer.js';
export type { SynthesisOutcome, SynthesizeInput, SynthesizerLike } from '../contracts/roles.js';
