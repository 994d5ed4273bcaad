/**
 * `--backend-module`: a JavaScript (or, under tsx, TypeScript) module of the user's that supplies the benchmark's
 * backends and tools, for a provider the CLI has no flag for, a proxy, a replay, or a scripted backend in tests.
 * @module
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { LlmBackend } from '../backend/types.js';
import type { BenchmarkPair } from '../benchmark/agentif/runner.js';
import { HarnessError } from '../errors.js';
import type { Tool } from '../tools/types.js';
import { docsUrl } from '../project-links.js';

/**
 * What a backend module exports (named exports, or the same keys on its default export); each is optional, and what
 * it leaves out comes from the flags and the environment.
 */
export interface BackendModule {
  /** The agent's backend, or a function giving one per task × configuration. */
  agent?: LlmBackend | ((pair: BenchmarkPair) => LlmBackend);
  /** The judge's backend. */
  judge?: LlmBackend;
  /** The agent's tools for a pair (a fresh set per run); the CLI's built-in tool set when absent. */
  tools?: (pair: BenchmarkPair) => Tool[];
}

/** Imports `file` (relative to the working directory) and checks the shape of what it exports. */
export async function loadBackendModule(file: string): Promise<BackendModule> {
  const url = pathToFileURL(path.resolve(file)).href;
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(url)) as Record<string, unknown>;
  } catch (error) {
    throw new HarnessError(
      'invalid-options',
      `--backend-module ${file} could not be imported: ${(error as Error).message}. ` +
        'Give a .js/.mjs file (a .ts file needs the CLI run through tsx).',
      { cause: error },
    );
  }
  const source = (typeof loaded.default === 'object' && loaded.default !== null ? loaded.default : loaded) as Record<
    string,
    unknown
  >;
  const { agent, judge, tools } = source;
  const problems = [
    agent !== undefined && !isBackend(agent) && typeof agent !== 'function' ? 'agent (a backend or a function)' : '',
    judge !== undefined && !isBackend(judge) ? 'judge (a backend with generate())' : '',
    tools !== undefined && typeof tools !== 'function' ? 'tools (a function returning tools)' : '',
  ].filter(Boolean);
  if (problems.length) {
    throw new HarnessError('invalid-options', `--backend-module ${file} exports an invalid ${problems.join(', ')}.`);
  }
  if (agent === undefined && judge === undefined && tools === undefined) {
    throw new HarnessError(
      'invalid-options',
      `--backend-module ${file} exports none of agent, judge, tools. Export at least one (see ${docsUrl('cli.md')}).`,
    );
  }
  return source as BackendModule;
}

function isBackend(value: unknown): value is LlmBackend {
  return typeof value === 'object' && value !== null && typeof (value as LlmBackend).generate === 'function';
}
