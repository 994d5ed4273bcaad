/**
 * AgentAdapter: the interface through which managed mode runs an executor or an auditor that is not its built-in
 * ReAct loop (an agent CLI, an in-process agent), and the built-in adapters `harnessAgent()` and `functionAgent(fn)`.
 * `commandAgent` lives in command-agent.ts.
 * @module
 */
import type { AgentAdapter, EpisodeInput, EpisodeResult, EpisodeStatus } from '../../contracts/agent-adapter.js';
import { HarnessError, toHarnessError } from '../../errors.js';

const HARNESS_AGENT = Symbol.for('horizon-harness.harness-agent');

/** The built-in ReAct loop as an adapter; see {@link harnessAgent}. */
export interface HarnessAgent extends AgentAdapter {
  readonly name: 'harness';
  readonly [HARNESS_AGENT]: true;
}

/**
 * The built-in ReAct loop, the default executor and auditor: the `Executor` with the host's tools for execution, a
 * loop with read-only tools for audits. It runs only inside a managed run (or an `Auditor`), which gives it the
 * backend, tools and memory; its own `runEpisode` rejects with `invalid-input`.
 */
export function harnessAgent(): HarnessAgent {
  return Object.freeze({
    name: 'harness' as const,
    [HARNESS_AGENT]: true as const,
    runEpisode(): Promise<EpisodeResult> {
      return Promise.reject(
        new HarnessError(
          'invalid-input',
          'harnessAgent() is the built-in ReAct loop: only a managed run or an Auditor can start it, because it needs ' +
            'their backend, tools and memory. Pass it as managed.agents.executor/auditor, or use commandAgent() or functionAgent() to run an episode yourself.',
        ),
      );
    },
  });
}

/** True for the adapter {@link harnessAgent} returns (also from another copy of the library). */
export function isHarnessAgent(agent: unknown): agent is HarnessAgent {
  return typeof agent === 'object' && agent !== null && HARNESS_AGENT in agent;
}

const STATUSES: ReadonlySet<string> = new Set<EpisodeStatus>(['done', 'timeout', 'error', 'cancelled']);

/**
 * Wraps an in-process agent as an adapter. A throw becomes `error` (`cancelled` when the signal had aborted), and a
 * result that is not `{ status, output }` becomes `error` naming what was wrong.
 *
 * @example
 * ```ts
 * const executor = functionAgent(async ({ prompt, cwd, signal }) => {
 *   const text = await myAgent.run(prompt, { cwd, signal });
 *   return { status: 'done', output: text };
 * }, { name: 'my-agent' });
 * ```
 */
export function functionAgent(
  fn: (input: EpisodeInput) => EpisodeResult | Promise<EpisodeResult>,
  options: { name?: string } = {},
): AgentAdapter {
  if (typeof fn !== 'function') {
    throw new HarnessError(
      'invalid-options',
      'functionAgent needs a function (input) => { status, output, exitCode? }.',
    );
  }
  const name = options.name ?? (fn.name || 'function');
  return Object.freeze({
    name,
    async runEpisode(input: EpisodeInput): Promise<EpisodeResult> {
      try {
        return checkedResult(await fn(input), name);
      } catch (error) {
        const message = toHarnessError(error).message;
        return input.signal.aborted
          ? { status: 'cancelled', output: message }
          : { status: 'error', output: `The agent "${name}" threw: ${message}` };
      }
    },
  });
}

function checkedResult(value: unknown, name: string): EpisodeResult {
  const result = value as Partial<EpisodeResult> | null | undefined;
  if (
    !result ||
    typeof result.status !== 'string' ||
    !STATUSES.has(result.status) ||
    typeof result.output !== 'string'
  ) {
    return {
      status: 'error',
      output: `The agent "${name}" returned ${JSON.stringify(value)?.slice(0, 200) ?? String(value)}, not { status: 'done' | 'timeout' | 'error' | 'cancelled', output: string }.`,
    };
  }
  return {
    status: result.status,
    output: result.output,
    ...(typeof result.exitCode === 'number' ? { exitCode: result.exitCode } : {}),
  };
}
