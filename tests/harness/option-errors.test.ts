import {
  anthropic,
  builtinTools,
  createHarness,
  HarnessError,
  openAICompatible,
  serper,
  visitTool,
  type HarnessOptions,
} from 'horizon-harness';
import { ScriptedBackend } from 'horizon-harness/testing';
import { describe, expect, it } from 'vitest';

const backend = new ScriptedBackend([]);

/** The `invalid-options` error `make` throws; fails the test when it throws nothing or something else. */
function optionError(make: () => unknown): HarnessError {
  try {
    make();
  } catch (error) {
    if (HarnessError.isInstance(error) && error.code === 'invalid-options') return error;
    throw error;
  }
  throw new Error('expected an invalid-options error, got none');
}

const harnessWith = (options: Record<string, unknown>) => () =>
  createHarness({ backend, ...options } as HarnessOptions);

describe('a misspelt createHarness option names its full path and the closest valid key, at every level', () => {
  it.each([
    ['top level', { decompositon: false }, '`decompositon` is not an option (did you mean `decomposition`?)'],
    [
      'limits',
      { limits: { maxIteratons: 10 } },
      '`limits.maxIteratons` is not an option (did you mean `limits.maxIterations`?)',
    ],
    [
      'sampling',
      { sampling: { temprature: 0 } },
      '`sampling.temprature` is not an option (did you mean `sampling.temperature`?)',
    ],
    [
      'sampling.roles',
      { sampling: { roles: { verfy: { topP: 0.5 } } } },
      '`sampling.roles.verfy` is not an option (did you mean `sampling.roles.verify`?)',
    ],
    [
      'sampling of one role',
      { sampling: { roles: { plan: { top_p: 0.5 } } } },
      '`sampling.roles.plan.top_p` is not an option (did you mean `sampling.roles.plan.topP`?)',
    ],
    ['roles', { roles: { planner: backend } }, '`roles.planner` is not an option (did you mean `roles.plan`?)'],
    [
      'components',
      { components: { verifer: { verify: () => undefined } } },
      '`components.verifer` is not an option (did you mean `components.verifier`?)',
    ],
    [
      'prompts',
      { prompts: { sythesize: 'x' } },
      '`prompts.sythesize` is not an option (did you mean `prompts.synthesize`?)',
    ],
    [
      'managed',
      { managed: { maxRound: 3 } },
      '`managed.maxRound` is not an option (did you mean `managed.maxRounds`?)',
    ],
    [
      'managed.agents',
      { managed: { agents: { executer: undefined } } },
      '`managed.agents.executer` is not an option (did you mean `managed.agents.executor`?)',
    ],
    [
      'workspace settings',
      { workspace: { kep: true } },
      '`workspace.kep` is not an option (did you mean `workspace.keep`?)',
    ],
    [
      'memory',
      { memory: { compresAt: 0.8 } },
      '`memory.compresAt` is not an option (did you mean `memory.compressAt`?)',
    ],
    [
      'memory.observationAging',
      { memory: { observationAging: { keepRecent: 2 } } },
      '`memory.observationAging.keepRecent` is not an option (did you mean `memory.observationAging.keepRecentRounds`?)',
    ],
  ])('%s', (_level, options, message) => {
    expect(optionError(harnessWith(options)).message).toContain(message);
  });

  it('lists the valid keys of the level when no key is close, instead of guessing', () => {
    const { message } = optionError(harnessWith({ limits: { budget: 5 } }));
    expect(message).toContain(
      '`limits.budget` is not an option; the options of `limits` are `maxIterations`, `maxRunIterations`, `timeoutMs`,',
    );
    expect(message).not.toContain('did you mean');
    expect(optionError(harnessWith({ colour: 'red' })).message).toMatch(
      /`colour` is not an option; the options are `backend`, `tools`, .*`decomposition`/,
    );
  });

  it('keeps the limits hint for a bad limit value only, not for a misspelt key', () => {
    expect(optionError(harnessWith({ decompositon: false })).message).not.toContain('Limits are integers');
    const badLimit = optionError(harnessWith({ limits: { maxIterations: 0 } }));
    expect(badLimit.message).toContain('`limits.maxIterations`');
    expect(badLimit.message).toContain('Limits are integers ≥ 1');
  });

  it('names every misspelt key of one call', () => {
    const { message } = optionError(harnessWith({ decompositon: false, limits: { maxSubtask: 2 } }));
    expect(message).toContain('did you mean `decomposition`?');
    expect(message).toContain('did you mean `limits.maxSubtasks`?');
  });
});

describe('a misspelt adapter option is refused with a suggestion', () => {
  it.each([
    [
      'openAICompatible',
      () => openAICompatible({ baseURL: 'http://x.test/v1', model: 'm', apikey: 'k' } as never),
      '`apikey` is not an option (did you mean `apiKey`?)',
    ],
    [
      'openAICompatible retry',
      () => openAICompatible({ baseURL: 'http://x.test/v1', model: 'm', retry: { maxRetryAfter: 1 } } as never),
      '`retry.maxRetryAfter` is not an option (did you mean `retry.maxRetryAfterMs`?)',
    ],
    [
      'anthropic',
      () => anthropic({ apiKey: 'k', model: 'm', baseUrl: 'http://x.test' } as never),
      '`baseUrl` is not an option (did you mean `baseURL`?)',
    ],
    [
      'anthropic retry',
      () => anthropic({ apiKey: 'k', model: 'm', retry: { retries: 2 } } as never),
      '`retry.retries` is not an option; the options of `retry` are `minTimeoutMs`',
    ],
  ])('%s', (_adapter, make, message) => {
    expect(optionError(make).message).toContain(message);
  });

  it('names the misspelt key, never its value (which may be a secret)', () => {
    const { message } = optionError(() =>
      openAICompatible({ baseURL: 'http://x.test/v1', model: 'm', api_key: 'sk-SECRET-123' } as never),
    );
    expect(message).toContain('`api_key`');
    expect(message).not.toContain('sk-SECRET-123');
  });
});

describe('a misspelt builtinTools option is refused with a suggestion', () => {
  it('at the top level, where it would otherwise leave a tool at its defaults', () => {
    expect(optionError(() => builtinTools({ shel: false } as never)).message).toBe(
      'builtinTools: `shel` is not an option (did you mean `shell`?).',
    );
    expect(optionError(() => builtinTools({ sandbox: true } as never)).message).toContain(
      'the options are `search`, `scholar`, `visit`, `network`',
    );
  });

  it('under network, where a misspelt allowlist would fail open', () => {
    const { message } = optionError(() => builtinTools({ network: { allowHost: ['docs.example.org'] } } as never));
    expect(message).toContain('`network.allowHost` is not an option (did you mean `network.allowHosts`?)');
  });
});

describe('a misspelt option of one built-in tool is refused with a suggestion', () => {
  it.each([
    [
      'under builtinTools',
      () => builtinTools({ shell: { aprove: () => true } } as never),
      '`aprove` is not an option (did you mean `approve`?)',
    ],
    [
      'of visitTool',
      () => visitTool({ timeoutMS: 5 } as never),
      '`timeoutMS` is not an option (did you mean `timeoutMs`?)',
    ],
    [
      'of a search provider',
      () => serper({ apiKey: 'k', baseUrl: 'http://x.test' } as never),
      '`baseUrl` is not an option (did you mean `baseURL`?)',
    ],
  ])('%s', (_where, make, message) => {
    expect(optionError(make).message).toContain(message);
  });
});
