import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const source = (file: string) => fileURLToPath(new URL(file, import.meta.url));

export default defineConfig({
  // Examples and docs import the package by name, as a user's code does; tests run them against the source.
  resolve: {
    alias: [
      { find: /^horizon-harness\/testing$/, replacement: source('./src/testing/index.ts') },
      { find: /^horizon-harness\/benchmark$/, replacement: source('./src/benchmark/index.ts') },
      { find: /^horizon-harness\/mcp$/, replacement: source('./src/mcp/index.ts') },
      { find: /^horizon-harness\/otel$/, replacement: source('./src/otel/index.ts') },
      { find: /^horizon-harness\/bullmq$/, replacement: source('./src/bullmq/index.ts') },
      { find: /^horizon-harness$/, replacement: source('./src/index.ts') },
    ],
  },
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    setupFiles: ['tests/support/warm-tokenizer.ts'],
    // The per-user snapshot key file of the runs the tests start (and of their child processes): not in the home of
    // whoever runs the tests.
    env: {
      HORIZON_HARNESS_STATE_DIR: path.join(tmpdir(), `horizon-harness-test-state-${process.getuid?.() ?? 'user'}`),
    },
  },
});
