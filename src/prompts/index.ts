/** Role prompt templates (adapted from OneDayAgent Appendix D) and their rendering. @module */
export { EXECUTOR_SYSTEM_PROMPT, executorSystemPrompt, type ExecutorPromptFacts } from './executor.js';
export { INSTRUCTED_ROLES, type InstructedRole, type RoleInstructions, withInstructions } from './instructions.js';
export { PLANNER_PROMPT } from './planner.js';
export { REPAIRER_PROMPT } from './repairer.js';
export { SYNTHESIZER_PROMPT } from './synthesizer.js';
export { DataMark } from './datamark.js';
export { renderTemplate } from './template.js';
export { VERIFIER_PROMPT } from './verifier.js';
