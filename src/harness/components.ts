/**
 * The small interfaces a user implements to replace a pipeline component.
 * @module
 */
import type { ExecutorResult, ExecutorRunInput } from '../executor/executor.js';

/** Anything that runs one ReAct loop like `Executor`; pass one as `components.executor`. */
export interface ExecutorLike {
  run(input: ExecutorRunInput): Promise<ExecutorResult>;
}
