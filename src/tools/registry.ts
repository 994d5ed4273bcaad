import path from 'node:path';
import { z } from 'zod';
import type { ToolCall, ToolSpec } from '../backend/types.js';
import { DEFAULTS } from '../defaults.js';
import { HarnessError } from '../errors.js';
import type { DataMark } from '../prompts/datamark.js';
import { isStandardSchema, isZodSchema, validateWithSchema } from '../schema/schema-adapter.js';
import { TOOL_NAME_PATTERN } from './define-tool.js';
import { inputJsonSchema } from './input-json-schema.js';
import { markUntrustedSpec } from './untrusted-spec.js';
import type { ImagePart, Tool, ToolContext, ToolInvocation, ToolOutput } from './types.js';

/** Names the executor provides itself; a registered tool may not take them. */
export const RESERVED_TOOL_NAMES: readonly string[] = ['submit_answer'];

const MAX_TIMER_MS = 2_147_483_647;
const RAW_ARGUMENTS_PREVIEW = 500;

const RegistryOptionsSchema = z.object({
  /** @defaultValue DEFAULTS.toolTimeoutMs (120 000) */
  toolTimeoutMs: z.number().int().positive().max(MAX_TIMER_MS).default(DEFAULTS.toolTimeoutMs),
});

/** Options of {@link ToolRegistry}. */
export type ToolRegistryOptions = z.input<typeof RegistryOptionsSchema>;

/** Per-call options of {@link ToolRegistry.invoke}. */
export interface InvokeOptions {
  /** Timeout for tools without their own `timeoutMs`; overrides the registry default. */
  timeoutMs?: number;
  /** Names the caller handles itself (e.g. `submit_answer`), listed in the unknown-tool observation. */
  alsoAvailable?: readonly string[];
}

interface Entry {
  tool: Tool;
  spec: ToolSpec;
}

/**
 * The tools one executor offers to the model. `invoke` validates a call and runs it; it never throws:
 * every problem becomes an error observation the model can correct.
 *
 * @example
 * ```ts
 * const tools = new ToolRegistry([add], { toolTimeoutMs: 30_000 });
 * tools.specs(); // [{ name: 'add', description: '…', inputSchema: { type: 'object', … } }]
 * ```
 */
export class ToolRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly toolTimeoutMs: number;

  constructor(tools: readonly Tool[] = [], options: ToolRegistryOptions = {}) {
    const parsed = RegistryOptionsSchema.safeParse(options);
    if (!parsed.success) {
      throw new HarnessError(
        'invalid-options',
        `Invalid ToolRegistry option "toolTimeoutMs": ${String(options.toolTimeoutMs)}. ` +
          `Use a positive integer of milliseconds up to ${MAX_TIMER_MS}.`,
      );
    }
    this.toolTimeoutMs = parsed.data.toolTimeoutMs;
    this.register([...tools]);
  }

  /** Adds one tool or several; a duplicate, reserved or malformed tool is rejected with `tool-registration`. */
  // biome-ignore lint/suspicious/noExplicitAny: a tool of any input type can be registered; its own schema checks the input
  register(tools: Tool<any> | readonly Tool<any>[]): this {
    const list: readonly Tool[] = Array.isArray(tools) ? tools : [tools as Tool];
    const batch = new Map<string, Entry>();
    for (const tool of list) {
      const entry = toEntry(tool);
      if (this.entries.has(entry.spec.name) || batch.has(entry.spec.name)) {
        throw new HarnessError(
          'tool-registration',
          `A tool named "${entry.spec.name}" is already registered. Tool names must be unique; rename one of them.`,
        );
      }
      batch.set(entry.spec.name, entry);
    }
    for (const [name, entry] of batch) this.entries.set(name, entry);
    return this;
  }

  /** True when a tool of that name is registered. */
  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** The tool of that name, if registered. */
  get(name: string): Tool | undefined {
    return this.entries.get(name)?.tool;
  }

  /** Every registered tool, in registration order. */
  list(): Tool[] {
    return [...this.entries.values()].map((entry) => entry.tool);
  }

  /**
   * The tools as offered to the model: name, description and JSON Schema of the input. With the run's `mark`, the
   * description and schema text of a tool marked `untrustedDescription` (an MCP server's) are shown as untrusted data.
   */
  specs(mark?: DataMark): ToolSpec[] {
    return [...this.entries.values()].map((entry) =>
      mark && entry.tool.untrustedDescription ? markUntrustedSpec(entry.spec, mark) : structuredClone(entry.spec),
    );
  }

  /**
   * Validates and runs one tool call. Never throws: bad JSON, schema failures, unknown tools,
   * tools that throw and tools that time out all come back as an error observation.
   */
  async invoke(call: ToolCall, context: ToolContext, options: InvokeOptions = {}): Promise<ToolInvocation> {
    const started = performance.now();
    const entry = this.entries.get(call.name);
    const base = { callId: call.id, toolName: call.name };
    const fail = (text: string): ToolInvocation => ({
      ...base,
      text,
      files: [],
      images: [],
      isError: true,
      observation: entry?.tool.observation ?? 'text',
      durationMs: performance.now() - started,
    });

    if (!entry) {
      const names = [...this.entries.keys(), ...(options.alsoAvailable ?? [])];
      return fail(
        `Unknown tool "${call.name}". Available tools: ${names.length > 0 ? names.join(', ') : '(none)'}. Call one of these by its exact name.`,
      );
    }
    const { tool } = entry;

    const args = parseArguments(call.arguments);
    if (!args.ok) {
      return fail(
        `Invalid arguments for tool "${tool.name}": they are not valid JSON (${args.error}). ` +
          `Received: ${preview(call.arguments)}. Send one JSON object that matches the tool's input schema.`,
      );
    }
    let validated: Checked;
    try {
      // Async so schemas with async refinements work; a throwing transform or refinement is the tool's bug, not the model's.
      validated = await checkInput(tool.input, args.value);
    } catch (error) {
      return fail(`Tool "${tool.name}" could not check its input: ${describeThrown(error)}`);
    }
    if (!validated.ok) {
      return fail(
        `Invalid arguments for tool "${tool.name}":\n${validated.lines.join('\n')}\nFix these fields and call the tool again.`,
      );
    }

    if (context.signal.aborted) return fail(`Tool "${tool.name}" was not run: the run was stopped.`);
    const timeoutMs = tool.timeoutMs ?? options.timeoutMs ?? this.toolTimeoutMs;
    const outcome = await runWithTimeout(tool, validated.value, context, timeoutMs);
    if (!outcome.ok) return fail(outcome.message);

    const output = safeNormalizeOutput(outcome.value, context.workspace.root);
    if (typeof output === 'string') return fail(`Tool "${tool.name}" returned an invalid result: ${output}`);
    return {
      ...base,
      text: output.text,
      files: output.files,
      images: output.images,
      isError: false,
      observation: tool.observation,
      durationMs: performance.now() - started,
    };
  }
}

function toEntry(tool: Tool): Entry {
  const name: unknown = tool?.name;
  if (typeof name !== 'string' || !TOOL_NAME_PATTERN.test(name)) {
    throw new HarnessError(
      'tool-registration',
      `Cannot register a tool named ${JSON.stringify(name)}: names must be 1–64 letters, digits, "_" or "-". Create tools with defineTool().`,
    );
  }
  if (RESERVED_TOOL_NAMES.includes(name)) {
    throw new HarnessError(
      'tool-registration',
      `The tool name "${name}" is reserved: the executor provides it itself. Choose another name.`,
    );
  }
  if (!isStandardSchema(tool.input) || typeof tool.execute !== 'function') {
    throw new HarnessError(
      'tool-registration',
      `Cannot register tool "${name}": it needs a Standard Schema (zod 4 or 3.24+, Valibot, ArkType…) as "input" and an "execute" function. Create tools with defineTool().`,
    );
  }
  const converted = inputJsonSchema(name, tool.input, tool.jsonSchema);
  if (!converted.ok) throw new HarnessError('tool-registration', `Cannot register ${converted.reason}.`);
  return { tool, spec: { name, description: tool.description, inputSchema: converted.schema } };
}

type Checked = { ok: true; value: unknown } | { ok: false; lines: string[] };

/**
 * Validates a call's arguments. A zod 4 schema is run by zod itself, so that its issues can quote the value received;
 * any other Standard Schema through `~standard.validate`.
 */
async function checkInput(schema: Tool['input'], value: unknown): Promise<Checked> {
  if (isZodSchema(schema)) {
    const parsed = await schema.safeParseAsync(value, { reportInput: true });
    return parsed.success
      ? { ok: true, value: parsed.data }
      : { ok: false, lines: parsed.error.issues.map(describeIssue) };
  }
  const checked = await validateWithSchema(schema, value);
  if (checked.ok) return checked;
  return { ok: false, lines: checked.issues.map((issue) => `- ${issue.path || '(the arguments)'}: ${issue.message}`) };
}

type Parsed = { ok: true; value: unknown } | { ok: false; error: string };

function parseArguments(raw: string): Parsed {
  // Models often send an empty string for a tool without parameters.
  if (raw.trim() === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

function preview(raw: string): string {
  const shown =
    raw.length > RAW_ARGUMENTS_PREVIEW ? `${raw.slice(0, RAW_ARGUMENTS_PREVIEW)}… (${raw.length} chars)` : raw;
  return JSON.stringify(shown);
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing (the field is missing)';
  if (value === null) return 'null';
  const kind = Array.isArray(value) ? 'array' : typeof value;
  let shown: string;
  try {
    shown = JSON.stringify(value) ?? String(value);
  } catch {
    shown = String(value);
  }
  if (shown.length > 80) shown = `${shown.slice(0, 80)}…`;
  return `${kind} ${shown}`;
}

function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, index) => (typeof key === 'number' ? `[${key}]` : `${index === 0 ? '' : '.'}${String(key)}`))
    .join('');
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const field = issue.path.length > 0 ? formatPath(issue.path) : '(the whole input)';
  const received = 'input' in issue ? describeValue(issue.input) : undefined;
  if (issue.code === 'invalid_type') {
    return `- ${field}: expected ${issue.expected}, received ${received ?? 'an invalid value'}`;
  }
  if (issue.code === 'unrecognized_keys') {
    return `- ${field}: unexpected field(s) ${issue.keys.map((key) => `"${key}"`).join(', ')}; remove them`;
  }
  return `- ${field}: ${issue.message}${received === undefined ? '' : `, received ${received}`}`;
}

type Outcome = { ok: true; value: unknown } | { ok: false; message: string };

async function runWithTimeout(tool: Tool, input: unknown, context: ToolContext, timeoutMs: number): Promise<Outcome> {
  const controller = new AbortController();
  const onParentAbort = () => controller.abort(context.signal.reason);
  context.signal.addEventListener('abort', onParentAbort, { once: true });
  const toolContext: ToolContext = {
    runId: context.runId,
    context: context.context,
    purpose: context.purpose,
    scope: context.scope,
    workspace: context.workspace,
    signal: controller.signal,
    backendFor: (role) => context.backendFor(role),
    generate: (role, request) => context.generate(role, { ...request }),
    onScopeEnd: (cleanup) => context.onScopeEnd(cleanup),
    ...(context.scopeKey ? { scopeKey: context.scopeKey } : {}),
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    const execution = (async () => tool.execute(input, toolContext))().then(
      (value): Outcome => ({ ok: true, value }),
      (error: unknown): Outcome => ({
        ok: false,
        message: `Tool "${tool.name}" failed: ${describeThrown(error)}`,
      }),
    );
    const stopped = new Promise<Outcome>((resolve) => {
      timer = setTimeout(() => {
        const message = `Tool "${tool.name}" timed out after ${timeoutMs} ms and was stopped. Try a smaller step or different arguments.`;
        // Resolve first: aborting fires the abort listener below synchronously.
        resolve({ ok: false, message });
        controller.abort(new HarnessError('timeout', message));
      }, timeoutMs);
      controller.signal.addEventListener(
        'abort',
        () => resolve({ ok: false, message: `Tool "${tool.name}" was stopped: the run was aborted.` }),
        { once: true },
      );
    });
    return await Promise.race([execution, stopped]);
  } finally {
    clearTimeout(timer);
    context.signal.removeEventListener('abort', onParentAbort);
  }
}

/**
 * What a tool threw, as text, without ever throwing itself: a thrown value's `message` getter, `toString()` or proxy
 * traps are the tool's code and may throw too.
 */
function describeThrown(error: unknown): string {
  try {
    if (error instanceof Error) {
      const { message } = error;
      if (typeof message === 'string') return message;
    }
  } catch {
    // Fall through to the string form.
  }
  try {
    return String(error);
  } catch {
    return 'an error value that cannot be shown as text';
  }
}

type Normalized = { text: string; files: string[]; images: ImagePart[] };

/** {@link normalizeOutput} for a result whose getters may throw: that is an invalid result, never a throw. */
function safeNormalizeOutput(output: unknown, root: string): Normalized | string {
  try {
    return normalizeOutput(output, root);
  } catch (error) {
    return `reading it failed (${describeThrown(error)}).`;
  }
}

function normalizeOutput(output: unknown, root: string): Normalized | string {
  if (typeof output === 'string') return { text: output, files: [], images: [] };
  if (typeof output !== 'object' || output === null || typeof (output as { text?: unknown }).text !== 'string') {
    return 'expected a string or an object { text, files?, images? }.';
  }
  const { text, files = [], images = [] } = output as Exclude<ToolOutput, string>;
  if (!Array.isArray(files) || files.some((file) => typeof file !== 'string'))
    return '"files" must be an array of paths.';
  if (!Array.isArray(images)) return '"images" must be an array of image parts.';
  const kept: string[] = [];
  const outside: string[] = [];
  for (const file of files) {
    const relative = toWorkspaceRelative(file, root);
    if (relative === undefined) outside.push(file);
    else if (!kept.includes(relative)) kept.push(relative);
  }
  const note = outside.length > 0 ? `\n(Ignored file paths outside the workspace: ${outside.join(', ')})` : '';
  return { text: text + note, files: kept, images: [...images] };
}

/** A workspace-relative path with forward slashes and no `./`; undefined when it leaves the workspace. */
export function toWorkspaceRelative(file: string, root: string): string | undefined {
  const slashed = file.replace(/\\/g, '/');
  let relative: string;
  if (path.posix.isAbsolute(slashed) || path.isAbsolute(file)) {
    relative = path.relative(root, file).replace(/\\/g, '/');
  } else {
    relative = path.posix.normalize(slashed);
  }
  if (
    relative === '' ||
    relative === '.' ||
    relative === '..' ||
    relative.startsWith('../') ||
    path.posix.isAbsolute(relative)
  ) {
    return undefined;
  }
  return relative.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
}
