/**
 * The option tables in docs/ list exactly the options the schemas accept.
 *
 * Convention: a table documenting options is preceded by `<!-- option-table: <id> -->`; the first cell of each row
 * names one or more options in backticks (`` `limits.maxIterations` ``, `` `retry.minTimeoutMs` / `retry.maxTimeoutMs` ``,
 * `` `search: { provider }` ``: the leading dotted name counts). Tables with the same id (in any page) add up; a
 * group (`limits`) counts as documented when its members are.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { AnthropicOptionsSchema } from '../../src/backend/anthropic.js';
import { OpenAICompatibleOptionsSchema } from '../../src/backend/openai-compatible.js';
import { HarnessOptionsSchema } from '../../src/modes/shared/options.js';
import { McpToolsOptionsSchema } from '../../src/mcp/options.js';
import { MemoryOptionsSchema } from '../../src/memory/options.js';
import { BUILTIN_TOOLS_OPTION_KEYS } from '../../src/tools/builtin/index.js';
import { NetworkOptionsSchema } from '../../src/tools/builtin/network-guard.js';

const docs = path.resolve(import.meta.dirname, '../../docs');

interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  options?: readonly z.ZodType[];
}
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The object schemas behind wrappers (optional, default, prefault, pipe) and in unions. */
function objectsIn(schema: z.ZodType): Array<Record<string, z.ZodType>> {
  const def = defOf(schema);
  if (def.type === 'object') return [def.shape ?? {}];
  if (def.type === 'union') return (def.options ?? []).flatMap(objectsIn);
  const inner = def.type === 'pipe' ? def.in : def.innerType;
  return inner ? objectsIn(inner) : [];
}

/** Every option path of a schema: each key, and the keys of nested objects (`limits.maxIterations`). */
function optionPaths(schema: z.ZodType, prefix = ''): string[] {
  return objectsIn(schema).flatMap((shape) =>
    Object.entries(shape).flatMap(([key, child]) => [`${prefix}${key}`, ...optionPaths(child, `${prefix}${key}.`)]),
  );
}

const memoryPaths = [...optionPaths(MemoryOptionsSchema), 'tokenizer'];

/** What each table id documents: every option path its schemas accept. */
const EXPECTED: Record<string, string[]> = {
  // `memory` is checked by MemoryManager, not by the harness schema, so its paths come from the memory schema.
  createHarness: [...optionPaths(HarnessOptionsSchema), ...memoryPaths.map((key) => `memory.${key}`)],
  memory: memoryPaths,
  adapters: [...optionPaths(OpenAICompatibleOptionsSchema), ...optionPaths(AnthropicOptionsSchema)],
  builtinTools: BUILTIN_TOOLS_OPTION_KEYS,
  network: optionPaths(NetworkOptionsSchema),
  mcpTools: optionPaths(McpToolsOptionsSchema),
};

/** The option names of every marked table, by id, with the page and line of each. */
function documentedOptions(): Map<string, Map<string, string>> {
  const byId = new Map<string, Map<string, string>>();
  for (const page of readdirSync(docs).filter((file) => file.endsWith('.md'))) {
    const lines = readFileSync(path.join(docs, page), 'utf8').split('\n');
    lines.forEach((line, index) => {
      const id = /^<!-- option-table: ([\w-]+) -->$/.exec(line.trim())?.[1];
      if (!id) return;
      const names = byId.get(id) ?? new Map<string, string>();
      byId.set(id, names);
      let row = index + 1;
      while (lines[row]?.trim() === '') row++;
      expect(lines[row], `${page}:${index + 1}: a table must follow the marker`).toMatch(/^\|/);
      for (row += 2; lines[row]?.startsWith('|'); row++) {
        const firstCell = lines[row]!.split(/(?<!\\)\|/)[1] ?? '';
        const found = [...firstCell.matchAll(/`([A-Za-z][\w.]*)[^`]*`/g)].map((m) => m[1]!);
        expect(found.length, `${page}:${row + 1}: the first cell names no option in backticks`).toBeGreaterThan(0);
        for (const name of found) names.set(name, `${page}:${row + 1}`);
      }
    });
  }
  return byId;
}

/** The names, plus every group they belong to (`limits` for `limits.maxIterations`). */
function withGroups(names: Iterable<string>): Set<string> {
  const all = new Set<string>();
  for (const name of names) {
    const parts = name.split('.');
    for (let i = 1; i <= parts.length; i++) all.add(parts.slice(0, i).join('.'));
  }
  return all;
}

describe('option tables in docs/', () => {
  const documented = documentedOptions();

  it('every marked table has a known id, and every id has a table', () => {
    expect([...documented.keys()].sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(Object.keys(EXPECTED))('%s: every option in the schema appears in a table', (id) => {
    const listed = withGroups(documented.get(id)?.keys() ?? []);
    expect(EXPECTED[id]!.filter((key) => !listed.has(key))).toEqual([]);
  });

  it.each(Object.keys(EXPECTED))('%s: every option in a table exists in the schema', (id) => {
    const known = new Set(EXPECTED[id]);
    const unknown = [...(documented.get(id) ?? new Map<string, string>())].filter(([name]) => !known.has(name));
    expect(unknown.map(([name, where]) => `${name} (${where})`)).toEqual([]);
  });

  it('the walk sees nested options, so a missing group member would be caught', () => {
    expect(EXPECTED.createHarness).toEqual(
      expect.arrayContaining(['limits.maxIterations', 'sampling.roles', 'managed.agents.auditor', 'workspace.keep']),
    );
    expect(EXPECTED.adapters).toEqual(expect.arrayContaining(['retry.maxTotalDelayMs', 'baseURL', 'maxOutputTokens']));
  });
});
