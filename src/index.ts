/**
 * horizon-harness: an embeddable harness for long-horizon autonomous agents.
 * @packageDocumentation
 */
export type {
  BackendPricing,
  ContentPart,
  FinishReason,
  GenerateRequest,
  GenerateResult,
  LlmBackend,
  Message,
  Pricing,
  PromptCacheCapability,
  Purpose,
  RetryNotice,
  StreamPart,
  ToolCall,
  ToolSpec,
  Usage,
} from './backend/types.js';
export { DEFAULTS } from './defaults.js';
export {
  ContextOverflowError,
  HarnessError,
  ProviderHttpError,
  type HarnessErrorCode,
  type HarnessErrorOptions,
} from './errors.js';
export { HarnessEvents, eventSender } from './event-bus.js';
export {
  HARNESS_EVENT_TYPES,
  isDeltaEvent,
  type HarnessListener,
  type AuditFinishEvent,
  type CacheBreakEvent,
  type CallScope,
  type EmitEvent,
  type EventBase,
  type EventInput,
  type EventOf,
  type HarnessEvent,
  type HarnessEventType,
  type IntegrityViolationEvent,
  type LlmRequestEvent,
  type LlmResponseEvent,
  type LlmRetryEvent,
  type TextDeltaEvent,
  type ReasoningDeltaEvent,
  type ToolCallDeltaEvent,
  type ManagerDecisionEvent,
  type MemoryCompressEvent,
  type MemoryPruneEvent,
  type MemoryTruncateEvent,
  type PlanCreatedEvent,
  type RepairFinishEvent,
  type RepairStartEvent,
  type RunErrorEvent,
  type RunFinishEvent,
  type RunResumeEvent,
  type RunWarningEvent,
  type RunStartEvent,
  type SubtaskAttemptEvent,
  type SubtaskFinishEvent,
  type SubtaskStartEvent,
  type SynthesisFinishEvent,
  type ToolCallEvent,
  type ToolResultEvent,
  type VerifyFinishEvent,
} from './events.js';
export type {
  CacheBreakCause,
  CacheBreakCount,
  Checkpoint,
  Defect,
  Deliverable,
  InterruptedCall,
  PlannedSubtask,
  PurposeUsage,
  ResumeCounts,
  RunCost,
  RunReport,
  RunResult,
  RunWarningCode,
  SubtaskRecord,
  Verdict,
  WriteConflict,
} from './contracts/work.js';
export type { ExecutionMemory, MemoryScope, PendingRequest, UsageReport } from './memory/types.js';
export type { ImagePart, ObservationKind, Tool, ToolContext, ToolInvocation, ToolOutput } from './tools/types.js';
export type {
  AppendResult,
  ArtifactRecord,
  Workspace,
  WriteGuard,
  WriteOptions,
  WriteOrigin,
} from './workspace/types.js';

// --- backend adapters (src/backend) ---
export {
  openAICompatible,
  OpenAICompatibleOptionsSchema,
  type OpenAICompatibleOptions,
} from './backend/openai-compatible.js';
export { anthropic, AnthropicOptionsSchema, ANTHROPIC_VERSION, type AnthropicOptions } from './backend/anthropic.js';
export { RetryOptionsSchema } from './backend/options.js';

// --- tools and executor (src/tools, src/executor) ---
export { defineTool, type ToolDefinition } from './tools/define-tool.js';
export { isStandardSchema, type JsonSchema } from './schema/schema-adapter.js';
export type { StandardSchemaV1 } from './schema/standard-schema.js';
export { ToolRegistry, RESERVED_TOOL_NAMES, type InvokeOptions, type ToolRegistryOptions } from './tools/registry.js';
export { Executor, type ExecutorOptions } from './executor/executor.js';
export type { Durability, ExecutorLike, ExecutorResult, ExecutorRunInput } from './contracts/executor.js';
export { SUBMIT_ANSWER_TOOL } from './prompts/executor.js';

// --- execution memory (src/memory) ---
export { MemoryManager, OUTPUTS_DIR } from './memory/memory-manager.js';
export { MemoryOptionsSchema, type MemoryManagerOptions, type ResolvedMemoryOptions } from './memory/options.js';
export {
  GPT_ENCODINGS,
  gptTokenizer,
  MAX_TOKENIZED_CHARS,
  type GptEncodingName,
  type Tokenizer,
  warmUpTokenizer,
} from './memory/tokenizer.js';
export type { TextCount } from './memory/bounded-count.js';
export { TokenCounter } from './memory/token-counter.js';
export { emergencyPrune, planCompression, type CompressionPlan, type PruneResult } from './memory/fit.js';
export { splitRounds, type DialogueRounds } from './memory/rounds.js';
export { ageObservations } from './memory/aging.js';
export { headTail, searchSnippets } from './memory/truncate.js';

// --- workspace and built-in tools (src/workspace, src/tools/builtin) ---
export { LocalWorkspace, type LocalWorkspaceOptions } from './workspace/local-workspace.js';
export { previewFile, type PreviewOptions } from './workspace/preview/preview-file.js';
export { builtinTools, readOnlyTools, type BuiltinToolsOptions } from './tools/builtin/index.js';
export { readFileTool, type ReadFileToolOptions } from './tools/builtin/read-file.js';
export { writeToFileTool } from './tools/builtin/write-to-file.js';
export { editFileTool } from './tools/builtin/edit-file.js';
export { analyzeImageTool, type AnalyzeImageToolOptions } from './tools/builtin/analyze-image.js';
export { generateImageTool, type GenerateImageToolOptions } from './tools/builtin/generate-image.js';
export {
  openAIImages,
  type GeneratedImage,
  type ImageBackend,
  type ImageGenerationRequest,
  type OpenAIImagesOptions,
} from './tools/builtin/image-backend.js';
export { searchTool, type SearchToolOptions } from './tools/builtin/search.js';
export { googleScholarTool } from './tools/builtin/google-scholar.js';
export {
  brave,
  searxng,
  serper,
  tavily,
  type BraveOptions,
  type HttpProviderOptions,
  type SearchProvider,
  type SearchRequest,
  type SearchResult,
  type SearxngOptions,
  type SerperOptions,
  type TavilyOptions,
} from './tools/builtin/search-providers/index.js';
export { visitTool, type VisitToolOptions } from './tools/builtin/visit.js';
export type { NetworkOptions } from './tools/builtin/network-guard.js';
export { htmlToReadable, type ReadablePage } from './tools/builtin/readable.js';
export { openAlexTool, abstractFromInvertedIndex, type OpenAlexToolOptions } from './tools/builtin/openalex.js';
export {
  pythonInterpreterTool,
  type PythonInterpreterTool,
  type PythonInterpreterToolOptions,
} from './tools/builtin/python-interpreter.js';
export {
  executeCommandTool,
  type ExecuteCommandTool,
  type ExecuteCommandToolOptions,
} from './tools/builtin/execute-command.js';
export {
  CommandPolicy,
  DEFAULT_COMMAND_RULES,
  parseShell,
  splitShellWords,
  type ApprovalRequest,
  type ApproveFn,
  type CommandPolicyOptions,
  type ParsedShell,
  type PolicyDecision,
  type PolicyEvaluation,
  type PolicyPart,
  type PolicyRule,
  type ShellCommand,
  type ShellRedirect,
} from './tools/builtin/command-policy.js';
export {
  probeBwrap,
  sandboxStatus,
  scrubEnv,
  type BwrapProbe,
  type SandboxMode,
  type SandboxStatus,
  type WorkspaceAccess,
} from './tools/builtin/sandbox.js';
export type { MemoryLimitKind, ProcessLimitKind } from './tools/builtin/sandbox/containment.js';
export type { TmpLimitKind } from './tools/builtin/sandbox/resource-limits.js';

// --- durable runs (src/durability) ---
export {
  FileRunStore,
  type FileRunStoreOptions,
  type LoopCheckpoint,
  type OptionsFingerprint,
  type ResumeOptions,
  type ResumeRedo,
  type RunSnapshot,
  type RunStore,
  type ToolCallJournal,
} from './durability/index.js';
export { EVENT_LOG_PATH, parseEventLog, readEventLog, type EventLogOption } from './event-log/index.js';

// --- pipeline (src/harness, planner, synthesizer, verifier, repairer, prompts) ---
export {
  createHarness,
  Harness,
  DEFAULT_PROMPTS,
  HarnessOptionsSchema,
  type HarnessOptions,
  type RoleName,
  type HarnessResumeOptions,
  type RunInput,
  type RunRequest,
  type RunStream,
  type TypedRunResult,
  type SamplingOption,
  type CloseResult,
  type WorkspaceOption,
  type WorkspaceSettings,
} from './harness/index.js';
export {
  Planner,
  type PlanInput,
  type PlanOutcome,
  type PlannerFacts,
  type PlannerLike,
  type PlannerOptions,
} from './planner/index.js';
export {
  Synthesizer,
  type SynthesisOutcome,
  type SynthesizeInput,
  type SynthesizerLike,
  type SynthesizerOptions,
} from './synthesizer/index.js';
export {
  Verifier,
  OFFICE_FORMATS,
  pdftoppmRenderer,
  sofficeRenderer,
  type ImageBudget,
  type OfficeDocument,
  type OfficeFormat,
  type OfficeRenderer,
  type OfficeRendering,
  type PdfPagesRenderer,
  type PdfPagesRequest,
  type RenderedPdfPages,
  type SofficeRendererOptions,
  type SubtaskAnswer,
  type VerifierLike,
  type VerifierOptions,
  type VerifyInput,
} from './verifier/index.js';
export {
  Repairer,
  mergeRepair,
  type RepairInput,
  type RepairOutcome,
  type RepairerLike,
  type RepairerOptions,
} from './repairer/index.js';
export {
  DataMark,
  EXECUTOR_SYSTEM_PROMPT,
  executorSystemPrompt,
  type ExecutorPromptFacts,
  PLANNER_PROMPT,
  REPAIRER_PROMPT,
  SYNTHESIZER_PROMPT,
  VERIFIER_PROMPT,
  renderTemplate,
  INSTRUCTED_ROLES,
  type InstructedRole,
  type RoleInstructions,
  withInstructions,
} from './prompts/index.js';
export {
  askJson,
  extractJson,
  parseJsonReply,
  type AskJsonResult,
  type JsonReplyParse,
  type JsonReplyRules,
} from './json/index.js';
export {
  callModel,
  estimateRequestTokens,
  type CallSettings,
  reservedOutputTokens,
  type ModelCallContext,
  type RequestFitter,
  type RequestTokenCounter,
  type Sampling,
  type UsageCall,
} from './llm/index.js';

// --- managed mode (src/modes/managed) ---
export {
  AGENT_ENV_ALLOWLIST,
  AUDITOR_PROMPT,
  Auditor,
  MANAGED_DEFAULTS,
  MANAGER_PROMPT,
  ManagedOptionsSchema,
  Manager,
  TASK_STATE_FILE,
  commandAgent,
  diffFingerprints,
  fallbackDecision,
  fingerprintWorkspace,
  functionAgent,
  harnessAgent,
  listFilesTool,
  type AgentAdapter,
  type AnsweredQuestion,
  type AuditCommands,
  type AuditInput,
  type AuditVerdict,
  type ExecutionClaim,
  type AuditOutcome,
  type EpisodeStatus,
  type HarnessAgent,
  type ManagerInput,
  type ManagerOutcome,
  type TaskRecordStatus,
  type AuditFinding,
  type AuditIntegrity,
  type AuditStatus,
  type ManagerNext,
  type RecordDraft,
  type AuditorLike,
  type AuditorOptions,
  type AuditReport,
  type CommandAgentOptions,
  type Contract,
  type EpisodeInput,
  type EpisodeResult,
  type Evidence,
  type FinalVerification,
  type Fingerprint,
  type ManagedEnding,
  type ManagedOptions,
  type ManagedPosition,
  type ManagedReport,
  type ManagedRunReport,
  type ManagedSnapshotState,
  type ManagedTally,
  type ManagerDecision,
  type ManagerLike,
  type ManagerOptions,
  type OnAsk,
  type RoleTokens,
  type TaskRecord,
  type TaskState,
} from './modes/managed/index.js';
