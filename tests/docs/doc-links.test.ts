import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHarness } from '../../src/harness/harness.js';
import { docsUrl, PROJECT_URL } from '../../src/project-links.js';
import { ScriptedBackend } from '../../src/testing/index.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Lines of code (not comments) of every source file. */
const codeLines = sourceFiles(path.join(ROOT, 'src')).flatMap((file) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => !/^\s*(\*|\/\/|\/\*\*)/.test(line))
    .map((line) => ({ file: path.relative(ROOT, file), line })),
);

describe('links to the documentation from code', () => {
  it('no message points at a relative docs/ path, which leads nowhere from an installed package', () => {
    const relative = codeLines.filter(({ line }) => /docs\/[a-z-]+\.md/.test(line) && !line.includes('${PROJECT_URL}'));
    expect(relative.map(({ file, line }) => `${file}: ${line.trim()}`)).toEqual([]);
  });

  it('every page a message links to exists in docs/', () => {
    const pages = codeLines.flatMap(({ line }) => [...line.matchAll(/docsUrl\('([^']+)'/g)].map((m) => m[1] as string));
    expect(pages.length).toBeGreaterThan(3);
    for (const page of pages) expect(existsSync(path.join(ROOT, 'docs', page)), page).toBe(true);
  });

  it('an invalid option names the docs page by its full address', () => {
    const error = (() => {
      try {
        createHarness({ backend: new ScriptedBackend({}), limits: { maxIterations: -1 } });
      } catch (caught) {
        return caught as Error;
      }
    })();
    expect(error?.message).toContain(`See ${docsUrl('pipeline.md')}.`);
    expect(docsUrl('pipeline.md')).toBe(`${PROJECT_URL}/blob/main/docs/pipeline.md`);
  });
});
