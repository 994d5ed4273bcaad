/**
 * A `ToolContext` for calling one tool directly in a test, without a harness, a run or a model.
 * @module
 */
import { rm } from 'node:fs/promises';
import type { GenerateRequest, GenerateResult, LlmBackend, Purpose } from '../backend/types.js';
import { HarnessError } from '../errors.js';
import type { ToolContext } from '../tools/types.js';
import { LocalWorkspace } from '../workspace/local-workspace.js';
import type { Workspace } from '../workspace/types.js';

/** Options of {@link createToolContext}; every one has a default fit for a unit test. */
export interface ToolContextOptions<Context = unknown> {
  /**
   * The workspace the tool works in: a directory (created when missing, never removed) or a `Workspace`.
   * @defaultValue a fresh temporary directory, removed by `dispose()`
   */
  workspace?: string | Workspace;
  /** For `backendFor()` and `generate()`, which a tool such as `analyze_image` or `visit` calls. @defaultValue none: they throw */
  backend?: LlmBackend;
  /** @defaultValue 'test-run' */
  runId?: string;
  /** @defaultValue 'execute' */
  purpose?: Purpose;
  /** @defaultValue 'subtask-1' */
  scope?: string;
  /** Aborting it is what a run's abort, or the tool's timeout, does to the tool. @defaultValue a signal never aborted */
  signal?: AbortSignal;
  /** The app's run context, as `harness.run({ task, context })` hands it to every tool call. @defaultValue undefined */
  context?: Context;
}

/** A {@link ToolContext} of a test, with the cleanup of what it made. */
export interface TestToolContext<Context = unknown> extends ToolContext<Context> {
  /**
   * Ends the scope: runs the cleanups the tool registered with `onScopeEnd` (as the end of an executor loop does), then
   * removes the temporary workspace when this context made one. Also `await using ctx = await createToolContext()`.
   */
  dispose(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * A context to call a tool's `execute(input, context)` directly, as the harness would inside an executor loop:
 * a real `LocalWorkspace` (a temporary one by default), the run's identifiers, a signal, and `generate` /
 * `backendFor` on the `backend` you pass. `dispose()` runs the scope's cleanups and removes the temporary workspace.
 *
 * @example
 * ```ts
 * const ctx = await createToolContext();
 * try {
 *   const output = await wordCount.execute({ text: 'one two three' }, ctx);
 *   expect(output).toBe('3');
 * } finally {
 *   await ctx.dispose();
 * }
 * ```
 */
export async function createToolContext<Context = unknown>(
  options: ToolContextOptions<Context> = {},
): Promise<TestToolContext<Context>> {
  const given = options.workspace;
  const workspace =
    typeof given === 'object' ? given : await LocalWorkspace.create(given === undefined ? {} : { dir: given });
  const removeOnDispose = given === undefined;
  const cleanups: Array<() => void | Promise<void>> = [];
  const purpose = options.purpose ?? 'execute';
  const signal = options.signal ?? new AbortController().signal;
  const backendFor = (role: Purpose | 'vision'): LlmBackend => {
    if (options.backend) return options.backend;
    throw new HarnessError(
      'invalid-input',
      `The tool asked for the "${role}" backend, but createToolContext() was given none: pass { backend } ` +
        '(a ScriptedBackend with steps for that purpose).',
    );
  };
  let disposed = false;
  const dispose = async (): Promise<void> => {
    if (disposed) return;
    disposed = true;
    // In reverse order of registration, as scopes unwind; one failing cleanup does not skip the others.
    const failures: unknown[] = [];
    for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve(cleanup()).catch((e) => failures.push(e));
    if (removeOnDispose) await rm(workspace.root, { recursive: true, force: true });
    if (failures.length) throw new AggregateError(failures, 'A cleanup registered with onScopeEnd failed.');
  };
  return {
    runId: options.runId ?? 'test-run',
    purpose,
    scope: options.scope ?? 'subtask-1',
    workspace,
    signal,
    scopeKey: {},
    context: options.context as Context,
    backendFor,
    generate: async (role, request): Promise<GenerateResult> =>
      backendFor(role).generate({ ...request, purpose: role, signal } as GenerateRequest),
    onScopeEnd: (cleanup) => {
      cleanups.push(cleanup);
    },
    dispose,
    [Symbol.asyncDispose]: dispose,
  };
}
