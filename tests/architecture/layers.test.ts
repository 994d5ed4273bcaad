import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Imports flow one way: the face (`harness/`) → the modes (`modes/pipeline`, `modes/managed`, and what both share in
 * `modes/shared`) → the roles → calls, memory and tools → workspace and backend → shared shapes. Type-only imports
 * count: a shape that reaches up ties the lower layer to the upper one just the same.
 */
const SRC = path.resolve(import.meta.dirname, '../../src');

/** Folders (below `src/`) by layer, top first; a file may import its own layer and those after it. */
const LAYERS: readonly (readonly string[])[] = [
  ['index.ts', 'cli', 'bullmq', 'otel', 'benchmark', 'viewer'],
  ['harness'],
  ['modes/pipeline', 'modes/managed'],
  ['modes/shared'],
  ['planner', 'executor', 'synthesizer', 'verifier', 'repairer'],
  ['handoff', 'llm', 'memory', 'tools', 'mcp', 'json', 'prompts', 'durability', 'testing', 'event-log'],
  ['workspace', 'backend', 'ai-sdk', 'util'],
  // Shapes and primitives every layer names: the backend's messages, the workspace, the snapshot, the data boundary,
  // the Standard Schema adapter.
  [
    'contracts',
    'schema',
    'backend/types.ts',
    'workspace/types.ts',
    'durability/types.ts',
    'prompts/datamark.ts',
    'errors.ts',
    'events.ts',
    'event-bus.ts',
    'defaults.ts',
    'project-links.ts',
  ],
];

function layerOf(file: string): { layer: number; unit: string } {
  const rel = path.relative(SRC, file).split(path.sep).join('/');
  // The most specific unit wins: `backend/types.ts` sits below the rest of `backend`.
  let found: { layer: number; unit: string } | undefined;
  for (const [layer, units] of LAYERS.entries()) {
    for (const unit of units) {
      const matches = rel === unit || rel.startsWith(`${unit}/`);
      if (matches && unit.length > (found?.unit.length ?? -1)) found = { layer, unit };
    }
  }
  if (!found) throw new Error(`${rel} belongs to no layer: add its folder to LAYERS`);
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:from|import\()\s*'(\.\.?\/[^']+)'/g)].map((m) => m[1] as string);
  return specs
    .map((spec) => path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')))
    .filter((target) => target.startsWith(`${SRC}${path.sep}`));
}

const files = sourceFiles(SRC);

describe('import direction', () => {
  it('every source file belongs to a layer', () => {
    for (const file of files) expect(() => layerOf(file)).not.toThrow();
  });

  it('no import reaches up a layer, and the two modes never import each other', () => {
    const upward: string[] = [];
    for (const file of files) {
      const from = layerOf(file);
      for (const target of importsOf(file)) {
        const to = layerOf(target.endsWith('.ts') ? target : `${target}/index.ts`);
        const sameLayerOtherMode = from.layer === to.layer && from.unit.startsWith('modes/') && from.unit !== to.unit;
        if (to.layer < from.layer || sameLayerOtherMode) {
          upward.push(`${path.relative(SRC, file)} → ${path.relative(SRC, target)}`);
        }
      }
    }
    expect(upward).toEqual([]);
  });
});
