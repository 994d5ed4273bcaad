/** The planner role. @module */
export { Planner, singleSubtask, type PlannerOptions } from './planner.js';
export type { PlanInput, PlanOutcome, PlannerLike } from '../pipeline/components.js';
