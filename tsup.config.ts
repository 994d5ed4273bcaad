import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', 'testing/index': 'src/testing/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  // Shared chunks: both entries of a format use one copy of every module, so one HarnessError class and one state.
  splitting: true,
  treeshake: true,
  // The tokenizer loads its encoding with createRequire(import.meta.url), which the CJS build must provide.
  shims: true,
});
