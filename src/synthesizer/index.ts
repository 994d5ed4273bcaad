/** The synthesizer role. @module */
export {
  Synthesizer,
  type SynthesisOutcome,
  type SynthesizeInput,
  type SynthesizerLike,
  type SynthesizerOptions,
} from './synthesizer.js';
