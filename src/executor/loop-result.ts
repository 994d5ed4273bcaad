/**
 * The {@link ExecutorResult} a loop ends with, from its progress.
 * @module
 */
import type { ExecutorResult } from '../contracts/executor.js';
import type { HarnessError } from '../errors.js';
import type { LoopProgress } from './loop-journal.js';

/** The loop's result: how it ended, its answer and every file it named or its tools wrote, and what it used. */
export function loopResult(
  progress: LoopProgress,
  status: ExecutorResult['status'],
  answer: string,
  files: readonly string[],
  error?: HarnessError,
): ExecutorResult {
  const { iterations, usage, peakRequestTokens, interruptedCalls } = progress;
  return {
    status,
    answer,
    files: [...new Set(files)],
    iterations,
    usage: { ...usage },
    peakRequestTokens,
    ...(interruptedCalls?.length ? { interruptedCalls: [...interruptedCalls] } : {}),
    ...(error ? { error: { code: error.code, message: error.message } } : {}),
  };
}
