import { describe, expect, it } from 'vitest';
import { chooseJudge } from '../../src/cli/bench-command.js';

describe('the judge backend of bench agentif', () => {
  it('defaults to the agent provider with HARNESS_JUDGE_MODEL, or the agent model when unset', () => {
    const env = { OPENAI_API_KEY: 'sk-agent', HARNESS_MODEL: 'agent-model' };
    expect(chooseJudge({}, env).label).toBe('openai agent-model at https://api.openai.com/v1');
    expect(chooseJudge({}, { ...env, HARNESS_JUDGE_MODEL: 'judge-model' }).backend.modelId).toBe('judge-model');
  });

  it('takes its own server, key variable and provider from --judge-* flags and HARNESS_JUDGE_* variables', () => {
    const env = { OPENAI_API_KEY: 'sk-agent', HARNESS_JUDGE_API_KEY: 'sk-judge', ANTHROPIC_API_KEY: 'sk-ant' };
    const own = chooseJudge({ judgeBaseUrl: 'http://127.0.0.1:8000/v1', judgeModel: 'qwen' }, env);
    expect(own.label).toMatch(/ qwen at http:\/\/127\.0\.0\.1:8000\/v1$/);
    // The agent on a local server does not pull an Anthropic judge onto it.
    const anthropicJudge = chooseJudge({ baseUrl: 'http://127.0.0.1:1/v1', model: 'local', judgeAnthropic: true }, env);
    expect(anthropicJudge.backend.provider).toBe('anthropic');
  });

  it('says that it is the judge whose backend cannot be configured', () => {
    expect(() => chooseJudge({ judgeApiKeyEnv: 'NOPE' }, {})).toThrow(/^The judge's backend: --api-key-env names NOPE/);
  });
});
