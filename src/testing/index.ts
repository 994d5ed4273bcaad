/**
 * Test helpers for code built on horizon-harness: a scripted backend and reply builders.
 * @packageDocumentation
 */
// --- scripted backend (src/testing) ---
export { ScriptedBackend, type Script, type ScriptStep, type ScriptedBackendOptions } from './scripted-backend.js';
export { planOf, reply, submit, toolCall, toolCalls, verdict, type ScriptedToolCall } from './replies.js';
export { PassThroughMemory } from './pass-through-memory.js';
export { replayBackend, type ReplayBackendOptions, type ReplayScenario } from './replay-backend.js';
export { DEMO_SCENARIO, DEMO_TASK } from './demo-scenario.js';
export {
  SimulatedPromptCache,
  withSimulatedPromptCache,
  type CacheableRequest,
  type SimulatedInputUsage,
  type SimulatedPromptCacheBackendOptions,
  type SimulatedPromptCacheOptions,
} from './simulated-prompt-cache.js';
export { createToolContext, type TestToolContext, type ToolContextOptions } from './tool-context.js';
export {
  auditVerdict,
  externalAuditOutput,
  managerDecision,
  type ManagerDecisionParts,
} from './managed-replies.js';
