/** The planner role. @module */
export { Planner, type PlannerOptions } from './planner.js';
export type { PlannerFacts } from '../prompts/planner.js';
export { singleSubtask } from '../handoff/plan.js';
export type { PlanInput, PlanOutcome, PlannerLike } from '../contracts/roles.js';
