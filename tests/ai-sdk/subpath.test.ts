import path from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('horizon-harness/ai-sdk', () => {
  it('uses only the types of @ai-sdk/provider: its built code imports no AI SDK package', async () => {
    // The same bundling tsup does (packages external): a value import of the peer would stay as an import statement.
    const { outputFiles } = await build({
      entryPoints: [path.join(ROOT, 'src/ai-sdk/index.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      write: false,
      logLevel: 'silent',
    });
    const imports = [...outputFiles[0]!.text.matchAll(/\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);
    expect(imports).toContain('zod');
    expect(imports.filter((name) => name?.startsWith('@ai-sdk/') || name === 'ai')).toEqual([]);
  });
});
