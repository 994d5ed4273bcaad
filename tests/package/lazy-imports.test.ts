import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/**
 * What a run may never need, loaded on first use: the parsers and image codecs of previews and the verifier's
 * images, the HTML stack of `visit`, undici (the first HTTP request), the network guard's address parser (the first
 * URL checked; required, since Node's export lexer would scan this CommonJS package on an import), the tokenizer's
 * rank tables (the first exact count), and the optional peers of the subpath exports.
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
  'ipaddr.js',
  'gpt-tokenizer',
  '@modelcontextprotocol/sdk',
  '@opentelemetry/api',
  'bullmq',
  'ioredis',
  '@ai-sdk/provider',
];
/**
 * The Node builtins the core loads on first use, through `process.getBuiltinModule` rather than a static import:
 * child processes (commands, Python, managed agents), the network guard's address checks and DNS, and what those
 * pull in (dgram, the block list); crypto (hashes, random bytes), module (the tokenizer's and ipaddr.js's require) and worker_threads (the tokenizer's thread). The ids are `process.moduleLoadList`'s; util's argument parser and MIME module
 * stand for any ESM import from `node:util`, which reads every export of the module and so loads them.
 */
const DEFERRED_BUILTINS = [
  'child_process',
  'net',
  'dns',
  'dgram',
  'internal/blocklist',
  'internal/util/parse_args/parse_args',
  'internal/mime',
  'crypto',
  'module',
  'worker_threads',
];
/**
 * The bundle lives under the project's node_modules so that its package imports resolve (as in the durability
 * crash test).
 */
const BUNDLE = path.join(ROOT, 'node_modules/.cache/horizon-harness-lazy-test', `index-${process.pid}.mjs`);

let dir: string;
let bundle: string;
beforeAll(async () => {
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
  bundle = outputFiles[0]!.text;
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
afterAll(() => Promise.all([rm(dir, { recursive: true, force: true }), rm(BUNDLE, { force: true })]));

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

  it('keeps them out of the static imports of the bundle, where a dynamic import of a local module would not', () => {
    const statics = new Set([...bundle.matchAll(/^import\s(?:[^;'"]*?\sfrom\s)?['"]([^'"]+)['"]/gm)].map((m) => m[1]));
    expect(statics.has('zod')).toBe(true);
    expect(HEAVY.filter((name) => statics.has(name))).toEqual([]);
  });

  it('loads no child-process, network, DNS or util-parser builtin before first use', async () => {
    // The built bundle rather than the sources through tsx, which itself spawns esbuild and hashes with node:crypto.
    await mkdir(path.dirname(BUNDLE), { recursive: true });
    await writeFile(BUNDLE, bundle);
    const { stdout } = await promisify(execFile)(process.execPath, [
      '--input-type=module',
      '-e',
      `await import(${JSON.stringify(pathToFileURL(BUNDLE).href)}); console.log(JSON.stringify(process.moduleLoadList));`,
    ]);
    const loaded = new Set(
      (JSON.parse(stdout) as string[])
        .filter((entry) => entry.startsWith('NativeModule '))
        .map((entry) => entry.slice(13)),
    );
    // fs loads with Node itself: the list is read and named as expected.
    expect(loaded.has('fs')).toBe(true);
    expect(DEFERRED_BUILTINS.filter((id) => loaded.has(id))).toEqual([]);
  });
});
