/**
 * The ReAct executor: one bounded tool-using loop in a fresh dialogue.
 * @module
 */
export { Executor, type ExecutorOptions } from './executor.js';
export type { Durability, ExecutorLike, ExecutorResult, ExecutorRunInput } from '../contracts/executor.js';
