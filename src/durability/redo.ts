/**
 * What resuming from a snapshot does again, read from the executor loop the snapshot stopped in.
 * @module
 */
import { journalRedo, unansweredCalls } from '../executor/loop-journal.js';
import type { LoopCheckpoint, ResumeRedo } from './types.js';

/**
 * What a resumed run re-does. Inside a loop: the started, unfinished tool calls of the last reply (read-only ones are
 * run again, the others handed to the model as interrupted) or, when every call of that reply has its observation,
 * the next model call, which may have been in flight when the run stopped. Between loops the next step is a model
 * call of the next stage (the plan, a verification, a loop's first call), counted likewise.
 */
export function resumeRedo(loop: LoopCheckpoint | undefined): ResumeRedo {
  if (!loop) return { modelCalls: 1, rerunToolCalls: [], interruptedToolCalls: [] };
  const { rerun, interrupted } = journalRedo(loop);
  return {
    modelCalls: unansweredCalls(loop.dialogue).length === 0 ? 1 : 0,
    rerunToolCalls: rerun.map((call) => call.toolName),
    interruptedToolCalls: interrupted.map((call) => call.toolName),
  };
}
