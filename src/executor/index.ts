/**
 * The ReAct executor: one bounded tool-using loop in a fresh dialogue.
 * @module
 */
export { Executor, type ExecutorOptions, type ExecutorResult, type ExecutorRunInput } from './executor.js';
