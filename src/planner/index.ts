/** The planner role. @module */
export { Planner, singleSubtask, type PlanInput, type PlanOutcome, type PlannerLike, type PlannerOptions } from './planner.js';
