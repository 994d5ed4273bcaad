import { defineConfig, type Options } from 'tsup';

/**
 * The `horizon-harness` executable (package.json "bin"): ESM only, with the shebang of src/cli/bin.ts, built apart so
 * that commander never loads with the library.
 */
const cli: Options = {
  entry: { cli: 'src/cli/bin.ts' },
  format: ['esm'],
  sourcemap: true,
  clean: false,
  target: 'node20',
};

export default defineConfig([
  {
    // The subpaths with optional peers (mcp, otel, bullmq) load them with import() on first use, never statically;
    // ai-sdk imports only the types of its peer, so nothing of it is in the built code.
    entry: {
      index: 'src/index.ts',
      'testing/index': 'src/testing/index.ts',
      'mcp/index': 'src/mcp/index.ts',
      'otel/index': 'src/otel/index.ts',
      'bullmq/index': 'src/bullmq/index.ts',
      'benchmark/index': 'src/benchmark/index.ts',
      'ai-sdk/index': 'src/ai-sdk/index.ts',
    },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    // Both builds run at once: the library's clean leaves the CLI's output alone.
    clean: ['!cli.js', '!cli.js.map'],
    target: 'node20',
    // Shared chunks: both entries of a format use one copy of every module, so one HarnessError class and one state.
    splitting: true,
    treeshake: true,
    // The tokenizer loads its encoding with createRequire(import.meta.url), which the CJS build must provide.
    shims: true,
  },
  cli,
]);
