/**
 * Vitest setup: the o200k tables load before any test of the file runs, so every count a test sees is exact, as it
 * would be in a server that warmed up (docs/performance.md, "Warming up"). Without it, a count taken while the worker
 * thread is still loading is a byte bound, and a test's figures would depend on how fast the machine loads.
 * tests/memory/tokenizer-warm-up.test.ts covers the loading phase in fresh processes.
 */
import { warmUpTokenizer } from '../../src/memory/tokenizer.js';

await warmUpTokenizer();
