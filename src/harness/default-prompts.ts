/**
 * The built-in prompt of every role in one place, for a host that wants to read (or start its own from) them.
 * @module
 */
import { AUDITOR_PROMPT, MANAGER_PROMPT } from '../modes/managed/prompts.js';
import { EXECUTOR_SYSTEM_PROMPT } from '../prompts/executor.js';
import type { InstructedRole } from '../prompts/instructions.js';
import { PLANNER_PROMPT } from '../prompts/planner.js';
import { REPAIRER_PROMPT } from '../prompts/repairer.js';
import { SYNTHESIZER_PROMPT } from '../prompts/synthesizer.js';
import { VERIFIER_PROMPT } from '../prompts/verifier.js';

/**
 * The default prompt of each role, as `prompts.*` (and `managed.prompts.*`) would replace it and `instructions` are
 * appended to it: `plan`, `verify`, `manage` and `audit` are system prompts; `synthesize` and `repair` are the
 * objectives of their loops; `execute` is the executor loops' system prompt before the run adds what its tools
 * report about a sandbox (`executorSystemPrompt()` builds the full one). Templates keep their `{{placeholders}}`
 * (see docs/pipeline.md, "Prompt placeholders").
 */
export const DEFAULT_PROMPTS: Readonly<Record<InstructedRole, string>> = Object.freeze({
  plan: PLANNER_PROMPT,
  execute: EXECUTOR_SYSTEM_PROMPT,
  synthesize: SYNTHESIZER_PROMPT,
  verify: VERIFIER_PROMPT,
  repair: REPAIRER_PROMPT,
  manage: MANAGER_PROMPT,
  audit: AUDITOR_PROMPT,
});
