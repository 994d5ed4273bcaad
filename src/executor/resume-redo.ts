/**
 * What resuming from a snapshot does again, read from the executor loops the snapshot stopped in.
 * @module
 */
import { journalRedo, unansweredCalls } from './loop-journal.js';
import type { LoopCheckpoint, ResumeRedo } from '../durability/types.js';

/**
 * What a resumed run re-does, summed over the loops it stopped in (several when subtasks ran in parallel). Inside a
 * loop: the started, unfinished tool calls of the last reply (read-only ones are run again, the others handed to the
 * model as interrupted) or, when every call of that reply has its observation, the next model call, which may have
 * been in flight when the run stopped. Between loops the next step is a model call of the next stage (the plan, a
 * verification, a loop's first call), counted likewise.
 */
export function resumeRedo(loops: readonly LoopCheckpoint[]): ResumeRedo {
  if (!loops.length) return { modelCalls: 1, rerunToolCalls: [], interruptedToolCalls: [] };
  const redo: ResumeRedo = { modelCalls: 0, rerunToolCalls: [], interruptedToolCalls: [] };
  for (const loop of loops) {
    const { rerun, interrupted } = journalRedo(loop);
    if (unansweredCalls(loop.dialogue).length === 0) redo.modelCalls += 1;
    redo.rerunToolCalls.push(...rerun.map((call) => call.toolName));
    redo.interruptedToolCalls.push(...interrupted.map((call) => call.toolName));
  }
  return redo;
}
