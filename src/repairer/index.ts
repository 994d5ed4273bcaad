/** The repairer role. @module */
export { Repairer, type RepairInput, type RepairOutcome, type RepairerLike, type RepairerOptions } from './repairer.js';
