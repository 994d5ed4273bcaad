/**
 * The auditor (purpose `audit`): checks a round's contract in the environment with read-only means and returns a
 * verdict; the built-in ReAct loop or an external agent does the checking.
 * @module
 */
import type { LlmBackend, Purpose } from '../../backend/types.js';
import { DEFAULTS } from '../../defaults.js';
import { HarnessError, toHarnessError, type HarnessErrorCode } from '../../errors.js';
import type { EmitEvent } from '../../events.js';
import { Loop } from '../../executor/loop.js';
import type { LoopSettings } from '../../executor/loop-start.js';
import type { ExecutorRunInput } from '../../contracts/executor.js';
import { shapedJsonIn } from '../../json/parse-json-reply.js';
import type { Sampling } from '../../llm/call-model.js';
import { MemoryManager } from '../../memory/memory-manager.js';
import type { ExecutionMemory } from '../../memory/types.js';
import { DataMark } from '../../prompts/datamark.js';
import { readFileTool } from '../../tools/builtin/read-file.js';
import { ToolRegistry } from '../../tools/registry.js';
import type { Tool, ToolContext } from '../../tools/types.js';
import { isHarnessAgent } from './adapters.js';
import type { AgentAdapter } from '../../contracts/agent-adapter.js';
import {
  externalSubmitInstructions,
  parseAuditReply,
  type ParsedVerdict,
  VerdictSchema,
  verdictNonce,
} from './audit-verdict.js';
import { listFilesTool } from './list-files.js';
import { MANAGED_DEFAULTS } from '../shared/managed-options.js';
import {
  AUDITOR_PROMPT,
  type AuditCommands,
  builtinAuditorPrompt,
  renderAuditedState,
  renderAuditReask,
  renderAuditTask,
  renderExternalAuditPrompt,
} from './prompts.js';
import type { AuditInput, AuditorLike, AuditOutcome, AuditVerdict } from '../../contracts/managed.js';
import { withInstructions } from '../../prompts/instructions.js';

/**
 * The loop's purpose. `ExecutorRunInput` names the executor's own purposes, but the loop works for any: the audit's
 * calls must carry `audit`, which events, reports, per-role backends and scripted backends key on.
 */
const AUDIT_PURPOSE = 'audit' as Purpose as ExecutorRunInput['purpose'];

/** Options of {@link Auditor}. */
export interface AuditorOptions {
  /**
   * Who checks: the built-in ReAct loop, or an external agent whose output must end with the verdict in the block its
   * prompt names (marked with a per-episode nonce). @defaultValue harnessAgent()
   */
  agent?: AgentAdapter;
  /** The model of the built-in loop (required with it). */
  backend?: LlmBackend;
  /**
   * Tools of the built-in loop; each must be `readOnly` (others are refused with `invalid-options`). `read_file` and
   * `list_files` are added when no tool has their name.
   */
  tools?: readonly Tool[];
  /** Keeps the loop's requests inside the window; bounds tool output. @defaultValue `new MemoryManager()` */
  memory?: ExecutionMemory;
  /** Receives the loop's `llm-*`, `tool-*` and `memory-*` events. */
  emit?: EmitEvent;
  /** The backend of a role (`summarize`, `vision` for tools, `audit` for the loop). @defaultValue `() => backend` */
  backendFor?: (role: Purpose) => LlmBackend;
  /** The app's run context (`run({ context })`), handed to every call of its tools as `ToolContext.context`; never saved. */
  context?: unknown;
  /** Sampling of a role's calls. @defaultValue none sent */
  samplingFor?: (role: Purpose) => Sampling | undefined;
  /** Output tokens reserved for every call. @defaultValue DEFAULTS.maxOutputTokens (8 192) */
  maxOutputTokens?: number;
  now?: () => number;
  /** The audit instructions (built-in system prompt; start of an external auditor's prompt). @defaultValue AUDITOR_PROMPT */
  prompt?: string;
  /** The application's instructions, appended to `prompt` (so an external auditor's prompt carries them too). */
  instructions?: string;
  /** Evidence items shown per record. @defaultValue 3 */
  evidenceShown?: number;
  limits?: {
    /** Iterations of an audit, its re-ask included, when the input gives none. @defaultValue 30 */
    maxIterations?: number;
    /** @defaultValue DEFAULTS.timeoutMs */
    timeoutMs?: number;
    /** Timeout of tools without their own. */
    toolTimeoutMs?: number;
  };
}

/** One episode's reply text, and what it cost. */
interface Episode {
  text: string;
  iterations: number;
  /** The nonce of an external agent's verdict block. */
  nonce?: string;
  error?: { code: HarnessErrorCode; message: string };
}

/**
 * Audits one round: gives its agent the request, the audited state, the contract and the executor's unverified claim;
 * the agent checks the workspace with read-only means and ends with a verdict
 * `{ status, integrity, findings: [{ recordId?, check, observed, verdict }] }`. The built-in loop has read-only tools
 * only and submits the verdict JSON through `submit_answer` (or as its final text); an external agent hands it in
 * between the lines `VERDICT-<nonce>` and `END-VERDICT-<nonce>`, with a nonce drawn per episode and written only in its
 * prompt, and nothing else of its output is read. Only the auditor's own verdict counts: a reply holding two different
 * verdicts, or a copy of one it was given (in the claim, the contract, the state, or what its tools read), is refused.
 * A verdict that does not parse, validate or count is re-asked once in a new episode quoting the error; after that the
 * audit counts as `incomplete` + `suspect`. The Auditor does not fingerprint the workspace: managed
 * runs do that around every audit, whoever audits.
 *
 * @example
 * ```ts
 * const auditor = new Auditor({ backend, tools: readOnlyTools(hostTools) });
 * const { verdict } = await auditor.audit({ runId, round: 1, request, attachments: [], state, contract, claim,
 *   changedByExecutor: ['report.md'], workspace });
 * ```
 */
export class Auditor implements AuditorLike {
  /**
   * What the built-in loop can do about criteria on command output: run commands on a read-only workspace (a tool
   * `execute_command` made with `workspaceAccess: 'read-only'`), through a host's read-only `execute_command`, or
   * not at all; its system prompt says which. Undefined for an external agent.
   */
  readonly commands: AuditCommands | undefined;
  private readonly agent: AgentAdapter | undefined;
  private readonly settings: LoopSettings | undefined;
  private readonly instructions: string;
  private readonly evidenceShown: number;
  private readonly maxIterations: number;
  private readonly timeoutMs: number;
  /** Verdict-shaped JSON the tools of each running built-in episode read, by run and scope. */
  private readonly reads = new Map<string, string[]>();

  constructor(options: AuditorOptions = {}) {
    this.instructions = withInstructions(options.prompt ?? AUDITOR_PROMPT, options.instructions);
    this.evidenceShown = options.evidenceShown ?? MANAGED_DEFAULTS.evidenceShown;
    this.maxIterations = options.limits?.maxIterations ?? MANAGED_DEFAULTS.auditorIterations;
    this.timeoutMs = options.limits?.timeoutMs ?? DEFAULTS.timeoutMs;
    if (options.agent !== undefined && !isHarnessAgent(options.agent)) {
      this.agent = options.agent;
      this.commands = undefined;
      return;
    }
    const backend = options.backend;
    if (typeof backend?.generate !== 'function') {
      throw new HarnessError(
        'invalid-options',
        'Auditor needs `backend` (an LlmBackend) for its built-in loop, or an external `agent` (commandAgent, functionAgent).',
      );
    }
    const tools = auditTools(options.tools ?? [], options.limits?.toolTimeoutMs, (context, output) =>
      this.recordRead(context, output),
    );
    this.commands = auditCommands(tools);
    this.settings = {
      tools,
      memory: options.memory ?? new MemoryManager(),
      emit: options.emit,
      backendFor: options.backendFor ?? (() => backend),
      systemPrompt: builtinAuditorPrompt(this.instructions, this.commands),
      instructions: undefined,
      limits: {
        maxIterations: this.maxIterations,
        timeoutMs: this.timeoutMs,
        toolTimeoutMs: options.limits?.toolTimeoutMs,
        maxRepeatedInvalidCalls: DEFAULTS.maxRepeatedInvalidCalls,
      },
      now: options.now ?? Date.now,
      samplingFor: options.samplingFor ?? (() => undefined),
      maxOutputTokens: options.maxOutputTokens ?? DEFAULTS.maxOutputTokens,
      context: options.context,
    };
  }

  /** Audits one round. Never rejects for a model, tool or agent failure: those end as the fallback verdict. */
  async audit(input: AuditInput): Promise<AuditOutcome> {
    const budget = input.maxIterations ?? this.maxIterations;
    const mark = input.dataMark ?? DataMark.random();
    const task = this.agent
      ? renderExternalAuditPrompt(input, this.instructions, this.evidenceShown, mark)
      : renderAuditTask(input, mark);
    // What the auditor was given to judge: a verdict found there is someone else's, never the audit's.
    const given = [task, input.claim.summary, renderAuditedState(input.state, this.evidenceShown, mark)];
    const first = await this.episode(input, task, `audit-${input.round}`, budget, mark, given);
    const parsed = parseAuditReply(first.text, first.nonce, given);
    if (parsed.ok) return outcome(parsed.value, first.iterations, first.error);
    let error = withEpisodeError(parsed.error, first);
    let iterations = first.iterations;
    let lastError = first.error;
    const left = budget - first.iterations;
    // A stopped run gets no second episode, and neither does a loop with no iterations left for one.
    if (!input.signal?.aborted && (this.agent || left >= 1)) {
      // The previous episode's nonce is void: the re-ask names only its own.
      const voided = (text: string) => (first.nonce ? text.replaceAll(first.nonce, VOID_NONCE) : text);
      const reask = renderAuditReask(task, voided(error), voided(first.text), mark);
      const second = await this.episode(input, reask, `audit-${input.round}-reask`, left, mark, given);
      iterations += second.iterations;
      lastError = second.error;
      const again = parseAuditReply(second.text, second.nonce, given);
      if (again.ok) return outcome(again.value, iterations, second.error);
      error = withEpisodeError(again.error, second);
    }
    const verdict: AuditVerdict = {
      status: 'incomplete',
      integrity: 'suspect',
      findings: [{ check: 'The auditor returned a usable verdict.', observed: error, verdict: 'fail' }],
    };
    return {
      verdict,
      fallback: 'malformed-reply',
      reason: `The audit reply stayed unusable after one re-ask (${error}); it counts as incomplete and suspect.`,
      iterations,
      ...(lastError ? { error: lastError } : {}),
    };
  }

  /**
   * Runs one audit episode. An external agent's prompt ends with the instructions for a verdict block marked with a
   * fresh nonce; the built-in loop's verdicts found in its tools' outputs are added to `given`.
   */
  private async episode(
    input: AuditInput,
    task: string,
    scope: string,
    maxIterations: number,
    mark: DataMark,
    given: string[],
  ): Promise<Episode> {
    const timeoutMs = input.timeoutMs ?? this.timeoutMs;
    if (this.agent) {
      const nonce = verdictNonce();
      const env = { HARNESS_RUN_ID: input.runId, HARNESS_ROUND: String(input.round), HARNESS_ROLE: 'audit' };
      try {
        const result = await this.agent.runEpisode({
          prompt: `${task}\n\n${externalSubmitInstructions(nonce)}`,
          cwd: input.workspace.root,
          timeoutMs,
          signal: input.signal ?? new AbortController().signal,
          env,
        });
        return { text: result.output, iterations: 0, nonce };
      } catch (error) {
        const { code, message } = toHarnessError(error);
        return { text: '', iterations: 0, nonce, error: { code, message } };
      }
    }
    const key = readKey(input.runId, scope);
    const read: string[] = [];
    this.reads.set(key, read);
    try {
      const result = await new Loop(this.settings as LoopSettings, {
        runId: input.runId,
        purpose: AUDIT_PURPOSE,
        scope,
        request: input.request,
        objective: task,
        priorState: renderAuditedState(input.state, this.evidenceShown, mark),
        workspace: input.workspace,
        maxIterations,
        timeoutMs,
        dataMark: mark,
        ...(input.signal ? { signal: input.signal } : {}),
      }).run();
      return { text: result.answer, iterations: result.iterations, ...(result.error ? { error: result.error } : {}) };
    } finally {
      this.reads.delete(key);
      given.push(...read);
    }
  }

  /** Keeps the verdict-shaped JSON of a tool output of a running audit episode. */
  private recordRead(context: ToolContext, output: string): void {
    this.reads.get(readKey(context.runId, context.scope))?.push(...shapedJsonIn(output, VerdictSchema));
  }
}

/** What stands in for a void nonce in a re-ask. */
const VOID_NONCE = '(code of the previous episode, void now)';

function readKey(runId: string, scope: string): string {
  return `${runId}\u0000${scope}`;
}

function withEpisodeError(error: string, episode: Episode): string {
  return episode.error ? `${error} The audit episode failed: ${episode.error.message}` : error;
}

function outcome(verdict: ParsedVerdict, iterations: number, error: Episode['error']): AuditOutcome {
  const findings = verdict.findings.map((f) => ({
    ...(f.recordId === undefined ? {} : { recordId: f.recordId }),
    check: f.check,
    observed: f.observed,
    verdict: f.verdict,
  }));
  return {
    verdict: { status: verdict.status, integrity: verdict.integrity, findings },
    iterations,
    ...(error ? { error } : {}),
  };
}

/**
 * What the built-in auditor can do about command output: run commands through the read-only `execute_command` (the
 * workspace mounted read-only), through a host's tool of that name, or not at all.
 */
function auditCommands(tools: ToolRegistry): AuditCommands {
  const command = tools.list().find((tool) => tool.name === 'execute_command');
  if (!command) return 'none';
  return (command as { workspaceAccess?: unknown }).workspaceAccess === 'read-only' ? 'read-only-sandbox' : 'host-tool';
}

/**
 * The built-in auditor's tools: the given read-only ones, plus `read_file` and `list_files` when missing; each tells
 * `onOutput` what it returned, so that a verdict it read can be recognised if the auditor hands it in as its own.
 */
function auditTools(
  tools: readonly Tool[],
  toolTimeoutMs: number | undefined,
  onOutput: (context: ToolContext, output: string) => void,
): ToolRegistry {
  const writing = tools.filter((tool) => !tool.readOnly).map((tool) => tool.name);
  if (writing.length) {
    throw new HarnessError(
      'invalid-options',
      `Auditor tools must be read-only; these are not: ${writing.join(', ')}. Pass readOnlyTools(tools), or mark a tool readOnly only if it never changes anything.`,
    );
  }
  const names = new Set(tools.map((tool) => tool.name));
  const added = [readFileTool(), listFilesTool()].filter((tool) => !names.has(tool.name)) as Tool[];
  const watched = [...tools, ...added].map((tool) => watchedTool(tool, onOutput));
  return new ToolRegistry(watched, toolTimeoutMs === undefined ? {} : { toolTimeoutMs });
}

/** `tool` (every property as it is, through its prototype) with an `execute` that also reports its output. */
function watchedTool(tool: Tool, onOutput: (context: ToolContext, output: string) => void): Tool {
  const watched: Tool = Object.create(tool);
  Object.defineProperty(watched, 'execute', {
    value: async (input: unknown, context: ToolContext) => {
      const output = await tool.execute.call(tool, input, context);
      onOutput(context, typeof output === 'string' ? output : output.text);
      return output;
    },
  });
  return watched;
}
