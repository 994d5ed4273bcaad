/** The repairer role. @module */
export { Repairer, type RepairerOptions } from './repairer.js';
export type { RepairInput, RepairOutcome, RepairerLike } from '../pipeline/components.js';
