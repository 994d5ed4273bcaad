import { rm } from 'node:fs/promises';
import { LocalWorkspace } from '../../../../src/workspace/local-workspace.js';
import type { z } from 'zod';
import type { Tool, ToolContext } from '../../../../src/tools/types.js';

/** A real temporary workspace and a ToolContext over it, with the scope-end hooks collected. */
export interface TestContext {
  ctx: ToolContext;
  workspace: LocalWorkspace;
  abort: AbortController;
  /** Runs the registered scope-end cleanups, as the executor does when its loop ends. */
  endScope(): Promise<void>;
  /** Ends the scope and removes the workspace. */
  dispose(): Promise<void>;
}

/** Builds a ToolContext on a fresh temporary LocalWorkspace. */
export async function createTestContext(scope = 'subtask-1', runId = 'run-test'): Promise<TestContext> {
  const workspace = await LocalWorkspace.create();
  const abort = new AbortController();
  const cleanups: (() => void | Promise<void>)[] = [];
  const ctx: ToolContext = {
    runId,
    context: undefined,
    purpose: 'execute',
    scope,
    workspace,
    signal: abort.signal,
    backendFor: (role) => {
      throw new Error(`these tools never ask for a backend (asked for "${role}")`);
    },
    generate: (role) => {
      throw new Error(`these tools never call a model (asked for "${role}")`);
    },
    onScopeEnd: (cleanup) => {
      cleanups.push(cleanup);
    },
  };
  const endScope = async (): Promise<void> => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  };
  return {
    ctx,
    workspace,
    abort,
    endScope,
    dispose: async () => {
      await endScope();
      await rm(workspace.root, { recursive: true, force: true });
    },
  };
}

/** A built-in tool's input schema as the zod schema it is (`Tool.input` is typed as any Standard Schema). */
export function zodInput<I>(tool: Tool<I>): z.ZodType<I> {
  return tool.input as unknown as z.ZodType<I>;
}
