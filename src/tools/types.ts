/**
 * The tool contract: what a tool is, what it receives and what it returns.
 * @module
 */
import type { ContentPart, GenerateRequest, GenerateResult, LlmBackend, Purpose } from '../backend/types.js';
import type { JsonSchema } from '../schema/schema-adapter.js';
import type { StandardSchemaV1 } from '../schema/standard-schema.js';
import type { Workspace } from '../workspace/types.js';

/**
 * How the memory layer bounds a tool's output before it enters the dialogue
 * (ARCHITECTURE §5): search results as snippets, long page visits as summary + raw prefix,
 * file reads as previews, anything else head-and-tail truncated.
 */
export type ObservationKind = 'search' | 'visit' | 'file' | 'text';

/** An image a tool returns to the model. */
export type ImagePart = Extract<ContentPart, { type: 'image' }>;

/** What a tool returns: plain text, or text plus workspace-relative files and images. */
export type ToolOutput = string | { text: string; files?: string[]; images?: ImagePart[] };

/**
 * Everything a tool may use while it runs. `Context` is the type of the app's run context
 * (`harness.run({ task, context })`).
 */
export interface ToolContext<Context = unknown> {
  readonly runId: string;
  /**
   * The value the app passed as `context` to `harness.run()` (or `harness.resume()`): its own per-run objects, such
   * as a user id, a database handle or a request-scoped logger. The same object, never copied: it is not sent to any
   * model and not written to events or snapshots. `undefined` when the run was given none.
   */
  readonly context: Context;
  readonly purpose: Purpose;
  /** `subtask-1`…, `synthesis`, `repair-1`…: one scope per executor loop. */
  readonly scope: string;
  /** The run's workspace; every path a tool touches goes through it. */
  readonly workspace: Workspace;
  /** Aborted when the run is aborted, times out, or the tool's own timeout fires. */
  readonly signal: AbortSignal;
  /** The backend for a role (e.g. `'vision'` for image analysis, `'summarize'` for page summaries). */
  backendFor(role: Purpose | 'vision'): LlmBackend;
  /**
   * Calls the backend of `role` the way every model call of the run is made: fitted into its window, counted,
   * observed with `llm-request`/`llm-response` (purpose = `role`) and included in the report. Throws on backend
   * errors and when the request cannot fit (the registry turns that into an error observation).
   */
  generate(role: 'vision' | 'summarize', request: Omit<GenerateRequest, 'purpose' | 'signal'>): Promise<GenerateResult>;
  /** Registers cleanup to run when the current executor loop ends (e.g. kill a Python session). */
  onScopeEnd(cleanup: () => void | Promise<void>): void;
  /**
   * One object per executor loop of one run instance, made by the harness (unlike `runId`, which callers choose and
   * may reuse concurrently): tools keep per-loop state keyed on it, e.g. in a `WeakMap`.
   */
  readonly scopeKey?: object;
}

/** A tool the model can call. Create one with `defineTool`. */
export interface Tool<Input = unknown, Context = unknown> {
  readonly name: string;
  readonly description: string;
  /**
   * Schema of the input, from any Standard Schema library; it validates every call and is sent to the model as JSON
   * Schema (converted by the harness, or {@link Tool.jsonSchema}).
   */
  readonly input: StandardSchemaV1<unknown, Input>;
  /** The input's JSON Schema as its author gave it, for a schema the harness cannot convert; sent as is. */
  readonly jsonSchema?: JsonSchema;
  /** True when the tool never changes the workspace or the outside world (the managed mode's auditor uses only these). */
  readonly readOnly: boolean;
  /** How the memory layer bounds this tool's output. */
  readonly observation: ObservationKind;
  /** Per-call timeout; the harness default applies when absent. */
  readonly timeoutMs?: number;
  /** Things the user should know before a run (e.g. that no sandbox is available); the harness reports them in `run-start`. */
  readonly warnings?: readonly string[];
  /**
   * True when the description and the input schema's text come from outside the host's code (an MCP server's tools):
   * the harness then shows them to the model as untrusted data, between the run's data markers. The name is never
   * changed.
   */
  readonly untrustedDescription?: boolean;
  /**
   * Set by a tool that runs programs (commands, code), as `execute_command` and `python_interpreter` do: `active` says
   * whether they run inside a sandbox. The executor's system prompt says so for each such tool; it claims nothing for
   * a tool without it.
   */
  readonly sandbox?: { readonly active: boolean };
  execute(input: Input, context: ToolContext<Context>): ToolOutput | Promise<ToolOutput>;
}

/** The result of invoking one tool call through the registry; never throws into the loop. */
export interface ToolInvocation {
  callId: string;
  toolName: string;
  /** The raw text the tool produced (or the error observation). */
  text: string;
  files: string[];
  images: ImagePart[];
  isError: boolean;
  observation: ObservationKind;
  durationMs: number;
}
