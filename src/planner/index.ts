/** The planner role. @module */
export { Planner, type PlannerOptions } from './planner.js';
export { singleSubtask } from '../pipeline/plan.js';
export type { PlanInput, PlanOutcome, PlannerLike } from '../pipeline/components.js';
