/**
 * The run every BullMQ test plays: a plan of three subtasks, one model call each, then a synthesis, on a scripted
 * backend whose every call takes `latencyMs` (the waiting a real model call is), and no verification.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { GenerateRequest } from '../../../src/backend/types.js';
import { ScriptedBackend, planOf, submit } from '../../../src/testing/index.js';

export const SUBTASKS = ['part 1', 'part 2', 'part 3'];
/** Model calls of one uninterrupted run: plan, three subtasks, synthesis. */
export const CALLS_PER_RUN = 5;

export function latencyBackend(latencyMs: number): ScriptedBackend {
  return new ScriptedBackend(async (request: GenerateRequest) => {
    await sleep(latencyMs, undefined, request.signal ? { signal: request.signal } : {});
    if (request.purpose === 'plan') return planOf(...SUBTASKS);
    if (request.purpose === 'synthesize') return submit('final answer');
    return submit('subtask done');
  });
}
