/**
 * The fingerprint of a harness's options: what a snapshot must have been made under to be resumed by it.
 * @module
 */
import type { Purpose } from '../backend/types.js';
import { flattenFields, makeFingerprint, shortHash } from '../durability/fingerprint.js';
import type { OptionsFingerprint } from '../durability/types.js';
import { parseMemoryOptions } from '../memory/options.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { Tool } from '../tools/types.js';
import { ROLE_NAMES, type ResolvedHarnessOptions } from '../modes/shared/options.js';

/** Tools as a field: names and `readOnly`, sorted. */
function toolNames(tools: readonly Tool[]): string {
  return tools
    .map((tool) => `${tool.name}${tool.readOnly ? ' (read-only)' : ''}`)
    .sort()
    .join(', ');
}

/**
 * The options that change a run's course, as fields: mode, decomposition, verification, every limit, managed mode's
 * numbers and switches, the managed roles' own tools, external agents (by name) and replaced manager/auditor, the
 * tools (names and `readOnly`), the
 * provider and model id of each role's backend, a hash of each prompt override, the memory options, and which
 * components are replaced. Functions, signals, clocks, sampling and the store are not part of it.
 * @internal
 */
export function optionsFingerprint(o: ResolvedHarnessOptions, registry: ToolRegistry): OptionsFingerprint {
  const fields: Record<string, string> = {
    mode: o.mode,
    decomposition: String(o.decomposition),
    verification: String(o.verification),
  };
  flattenFields('limits', o.limits, fields);
  const managed = o.managed;
  flattenFields(
    'managed',
    {
      ...managed,
      agents: undefined,
      components: undefined,
      prompts: undefined,
      executorTools: undefined,
      auditorTools: undefined,
    },
    fields,
  );
  for (const role of ['executorTools', 'auditorTools'] as const) {
    const tools = managed[role];
    if (tools) fields[`managed.${role}`] = toolNames(tools);
  }
  for (const [role, agent] of Object.entries(managed.agents)) if (agent) fields[`managed.agents.${role}`] = agent.name;
  for (const [name, part] of Object.entries(managed.components))
    if (part) fields[`managed.components.${name}`] = 'custom';
  for (const [role, text] of Object.entries(managed.prompts))
    if (text) fields[`managed.prompts.${role}`] = shortHash(text);
  fields.tools = toolNames(registry.list());
  const roles = o.roles as Partial<Record<Purpose | 'vision', { provider: string; modelId: string }>>;
  for (const role of ROLE_NAMES) {
    const backend = roles[role] ?? (role === 'verify' ? roles.vision : undefined) ?? o.backend;
    fields[`backend.${role}`] = `${backend.provider}/${backend.modelId}`;
  }
  for (const [role, text] of Object.entries(o.prompts)) if (text) fields[`prompts.${role}`] = shortHash(text);
  for (const [role, text] of Object.entries(o.instructions)) if (text) fields[`instructions.${role}`] = shortHash(text);
  flattenFields('memory', parseMemoryOptions(o.memory ?? {}), fields);
  if (o.memory?.tokenizer) fields['memory.tokenizer'] = 'custom';
  for (const [name, part] of Object.entries(o.components)) if (part) fields[`components.${name}`] = 'custom';
  return makeFingerprint(fields);
}
