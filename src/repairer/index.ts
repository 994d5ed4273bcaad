/** The repairer role. @module */
export { Repairer, mergeRepair, type RepairerOptions } from './repairer.js';
export type { RepairInput, RepairOutcome, RepairerLike } from '../contracts/roles.js';
