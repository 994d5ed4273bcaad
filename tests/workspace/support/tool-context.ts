import type { LlmBackend, Purpose, ToolCall } from '../../../src/backend/types.js';
import { HarnessError } from '../../../src/errors.js';
import { ToolRegistry } from '../../../src/tools/registry.js';
import type { Tool, ToolContext, ToolInvocation } from '../../../src/tools/types.js';
import type { Workspace } from '../../../src/workspace/types.js';

/** A tool context over a real workspace; `backendFor` answers from `backends`, falling back to `execute`. */
export function toolContext(
  workspace: Workspace,
  options: { backends?: Partial<Record<Purpose | 'vision', LlmBackend>>; scope?: string; signal?: AbortSignal } = {},
): ToolContext {
  return {
    runId: 'run-test',
    context: undefined,
    purpose: 'execute',
    scope: options.scope ?? 'subtask-1',
    workspace,
    signal: options.signal ?? new AbortController().signal,
    backendFor(role) {
      const backend = options.backends?.[role] ?? options.backends?.execute;
      if (!backend) throw new HarnessError('invalid-options', `No backend for role ${role} in this test.`);
      return backend;
    },
    generate(role, request) {
      return this.backendFor(role).generate({ ...request, purpose: role });
    },
    onScopeEnd() {},
  };
}

let nextId = 1;

/** Invokes a tool the way the executor does: JSON arguments through a ToolRegistry, errors as observations. */
export function invoke(tool: Tool<any>, args: unknown, context: ToolContext): Promise<ToolInvocation> {
  const call: ToolCall = { id: `call-${nextId++}`, name: tool.name, arguments: JSON.stringify(args) };
  return new ToolRegistry([tool as Tool]).invoke(call, context);
}
