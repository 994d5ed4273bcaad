import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/**
 * What a run may never need, loaded on first use: the parsers and image codecs of previews and the verifier's
 * images, the HTML stack of `visit`, undici (the first HTTP request), the tokenizer's rank tables (the first exact
 * count), and the optional peers of the subpath exports.
 */
const HEAVY = [
  'pngjs',
  'jpeg-js',
  'jszip',
  'unpdf',
  'mammoth',
  '@e965/xlsx',
  'tar',
  '@xmldom/xmldom',
  'image-size',
  'linkedom',
  '@mozilla/readability',
  'undici',
  'gpt-tokenizer',
  '@modelcontextprotocol/sdk',
  '@opentelemetry/api',
  'bullmq',
  'ioredis',
];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'lazy-test-'));
  // A module-loader hook that reports every package the import loads.
  await writeFile(
    path.join(dir, 'hooks.mjs'),
    `export async function load(url, context, next) {
      const match = /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(url);
      if (match) process.stderr.write('PACKAGE ' + match[1] + '\\n');
      return next(url, context);
    }`,
  );
  await writeFile(
    path.join(dir, 'register.mjs'),
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(path.join(dir, 'hooks.mjs')).href)});`,
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('importing the library', () => {
  it('loads no parser, codec, HTML stack, HTTP client, rank table or optional peer before first use', async () => {
    const { stderr } = await promisify(execFile)(
      process.execPath,
      [
        '--import',
        path.join(dir, 'register.mjs'),
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        "await import('./src/index.ts');",
      ],
      { cwd: ROOT },
    );
    const loaded = new Set([...stderr.matchAll(/^PACKAGE (.+)$/gm)].map((m) => m[1]));
    expect(loaded.has('zod')).toBe(true);
    expect(HEAVY.filter((name) => loaded.has(name))).toEqual([]);
  });

  it('keeps them out of the static imports of the bundle, where a dynamic import of a local module would not', async () => {
    // The same bundling tsup does (one file per entry, packages external): only imports inside functions stay lazy.
    const { outputFiles } = await build({
      entryPoints: [path.join(ROOT, 'src/index.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      write: false,
      logLevel: 'silent',
    });
    const code = outputFiles[0]!.text;
    const statics = new Set([...code.matchAll(/^import\s(?:[^;'"]*?\sfrom\s)?['"]([^'"]+)['"]/gm)].map((m) => m[1]));
    expect(statics.has('zod')).toBe(true);
    expect(HEAVY.filter((name) => statics.has(name))).toEqual([]);
  });
});
