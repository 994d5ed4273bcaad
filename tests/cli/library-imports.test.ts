import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';

const src = path.resolve(import.meta.dirname, '../../src');
const SPECIFIER = /(?:from\s+|import\s*\(\s*|import\s+)'([^']+)'/g;

/** Every module `entry` loads, following relative imports (static and dynamic), plus the packages it imports. */
function importGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
      if (!specifier!.startsWith('.')) {
        packages.add(specifier!);
        continue;
      }
      const target = path.resolve(path.dirname(file), specifier!).replace(/\.js$/, '.ts');
      pending.push(existsSync(target) ? target : path.join(target, 'index.ts'));
    }
  }
  return { files, packages };
}

it.each(['index.ts', 'testing/index.ts'])(
  'importing horizon-harness (%s) never loads the CLI, the viewer or commander',
  (entry) => {
    const { files, packages } = importGraph(path.join(src, entry));
    expect(files.size).toBeGreaterThan(10);
    const unwanted = [path.join(src, 'cli'), path.join(src, 'viewer')];
    expect([...files].filter((file) => unwanted.some((dir) => file.startsWith(dir)))).toEqual([]);
    expect(packages).not.toContain('commander');
    // The walk does see packages, so a commander import would be caught.
    expect(packages).toContain('zod');
  },
);
