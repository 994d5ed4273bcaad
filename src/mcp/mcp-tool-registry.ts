/**
 * A {@link ToolRegistry} whose MCP part follows the servers' tool lists, so a harness built once still offers each
 * executor loop the tools the servers list at that moment.
 * @module
 */
import type { ToolCall, ToolSpec } from '../backend/types.js';
import { HarnessError } from '../errors.js';
import type { DataMark } from '../prompts/datamark.js';
import { type InvokeOptions, ToolRegistry, type ToolRegistryOptions } from '../tools/registry.js';
import type { Tool, ToolContext, ToolInvocation } from '../tools/types.js';
import type { McpToolSet } from './tool-set.js';

interface Snapshot {
  /** The `tools` arrays it was built from (each set replaces its array on a change) and the static tool count. */
  lists: readonly (readonly Tool[])[];
  staticCount: number;
  registry: ToolRegistry;
}

/**
 * Your own tools plus the live tools of MCP servers, for `createHarness({ tools })`.
 *
 * Every executor loop (a subtask attempt, the synthesis, a repair) takes the tool list when it starts, from this
 * registry; the MCP part is re-read from each set's `tools` then, so a server's `listChanged` reaches the next loop.
 * A loop keeps the tools it started with; a call to a tool the server has since removed answers with the server's
 * error. Names must be unique: a clash when the registry is created throws `tool-registration` (give `mcpTools` a
 * `prefix`); an MCP tool that clashes after a later change is left out, and the tools registered here win.
 *
 * @example
 * ```ts
 * const github = await mcpTools({ url: 'https://example.com/mcp', headers: { Authorization: `Bearer ${token}` } }, { prefix: 'gh_' });
 * const harness = createHarness({ backend, tools: new McpToolRegistry(builtinTools(), [github]) });
 * ```
 */
export class McpToolRegistry extends ToolRegistry {
  private readonly sets: readonly McpToolSet[];
  private readonly registryOptions: ToolRegistryOptions;
  private snapshot: Snapshot;

  constructor(tools: readonly Tool[], sets: readonly McpToolSet[], options: ToolRegistryOptions = {}) {
    super(tools, options);
    if (!Array.isArray(sets) || sets.some((set) => typeof set?.onToolsChanged !== 'function')) {
      throw new HarnessError(
        'invalid-options',
        'McpToolRegistry: the second argument must be an array of tool sets returned by mcpTools().',
      );
    }
    this.sets = [...sets];
    this.registryOptions = { ...options };
    this.snapshot = this.build(true);
  }

  override has(name: string): boolean {
    return super.has(name) || this.mcp().has(name);
  }

  override get(name: string): Tool | undefined {
    return super.get(name) ?? this.mcp().get(name);
  }

  override list(): Tool[] {
    return [...super.list(), ...this.mcp().list()];
  }

  override specs(mark?: DataMark): ToolSpec[] {
    return [...super.specs(mark), ...this.mcp().specs(mark)];
  }

  override invoke(call: ToolCall, context: ToolContext, options: InvokeOptions = {}): Promise<ToolInvocation> {
    const mcp = this.mcp();
    if (!super.has(call.name) && mcp.has(call.name)) return mcp.invoke(call, context, options);
    const mcpNames = mcp.list().map((tool) => tool.name);
    return super.invoke(call, context, { ...options, alsoAvailable: [...mcpNames, ...(options.alsoAvailable ?? [])] });
  }

  /** The registry of the MCP tools as the sets list them now; rebuilt only after a change. */
  private mcp(): ToolRegistry {
    const lists = this.sets.map((set) => set.tools);
    const staticCount = super.list().length;
    const { snapshot } = this;
    const unchanged =
      snapshot.staticCount === staticCount && snapshot.lists.every((list, index) => list === lists[index]);
    if (!unchanged) this.snapshot = this.build(false);
    return this.snapshot.registry;
  }

  /** Registers each MCP tool; a clash throws at construction (`strict`) and is left out after a change. */
  private build(strict: boolean): Snapshot {
    const lists = this.sets.map((set) => set.tools);
    const registry = new ToolRegistry([], this.registryOptions);
    lists.forEach((list, index) => {
      for (const tool of list) {
        const clash = super.has(tool.name) || registry.has(tool.name);
        if (clash && strict) {
          throw new HarnessError(
            'tool-registration',
            `The tool "${tool.name}" of MCP server "${this.sets[index]?.server}" has the name of another tool. ` +
              'Give mcpTools() a different `prefix` for this server.',
          );
        }
        if (clash) continue;
        try {
          registry.register(tool);
        } catch (error) {
          if (strict) throw error;
        }
      }
    });
    return { lists, staticCount: super.list().length, registry };
  }
}
