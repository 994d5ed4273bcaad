import { describe, expect, it } from 'vitest';
import type { GenerateRequest, StreamPart } from '../../src/backend/types.js';
import { ProviderHttpError } from '../../src/errors.js';
import { planOf, reply, submit, toolCall, toolCalls, verdict } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { harnessRejection } from '../support/rejection.js';

const ask = (purpose: GenerateRequest['purpose'], text = 'hello'): GenerateRequest => ({
  messages: [{ role: 'user', content: text }],
  ...(purpose ? { purpose } : {}),
});

describe('ScriptedBackend', () => {
  it('plays a list in order regardless of purpose', async () => {
    const backend = new ScriptedBackend([reply('one'), reply('two')]);
    expect((await backend.generate(ask('plan'))).message.content).toBe('one');
    expect((await backend.generate(ask('verify'))).message.content).toBe('two');
    backend.assertComplete();
  });

  it('plays a separate list per purpose', async () => {
    const backend = new ScriptedBackend({ plan: [planOf('a')], execute: [reply('x'), reply('y')] });
    expect((await backend.generate(ask('execute'))).message.content).toBe('x');
    expect(JSON.parse((await backend.generate(ask('plan'))).message.content)).toEqual({
      subtasks: [{ title: 'a', objective: 'a', expectedOutput: 'The result of: a' }],
    });
    expect((await backend.generate(ask('execute'))).message.content).toBe('y');
    expect(backend.callsFor('execute')).toHaveLength(2);
    expect(backend.callsFor('plan')).toHaveLength(1);
  });

  it('answers with a function of the request and its index', async () => {
    const backend = new ScriptedBackend((request, index) => reply(`${request.purpose}#${index}`));
    expect((await backend.generate(ask('verify'))).message.content).toBe('verify#0');
    expect((await backend.generate(ask('plan'))).message.content).toBe('plan#1');
  });

  it('calls function steps with the request', async () => {
    const backend = new ScriptedBackend([(request) => reply(String(request.messages[0]?.content).toUpperCase())]);
    expect((await backend.generate(ask('execute', 'shout'))).message.content).toBe('SHOUT');
  });

  it('throws Error steps so tests can script provider failures', async () => {
    const failure = new ProviderHttpError('rate-limited', 'slow down', { status: 429, body: '' }, { retryable: true });
    const backend = new ScriptedBackend([failure, reply('after')]);
    await expect(backend.generate(ask('execute'))).rejects.toBe(failure);
    expect((await backend.generate(ask('execute'))).message.content).toBe('after');
  });

  it('fails an unscripted call loudly, naming the purpose, the index and what the script holds', async () => {
    const backend = new ScriptedBackend({ plan: [planOf('a')], execute: [submit('x')] });
    await backend.generate(ask('execute'));
    const error = await harnessRejection(backend.generate(ask('execute')));
    expect(error.code).toBe('unscripted-call');
    expect(error.message).toContain('"execute" call #2 (index 1)');
    expect(error.message).toContain('plan (1), execute (1)');
    const missing = await harnessRejection(backend.generate(ask('verify')));
    expect(missing.message).toContain('"verify" call #1');
    const list = new ScriptedBackend([]);
    expect((await harnessRejection(list.generate(ask('plan')))).message).toContain('call #1 (index 0)');
  });

  it('assertComplete lists unused steps per purpose', async () => {
    const backend = new ScriptedBackend({ plan: [planOf('a')], execute: [reply('x'), reply('y')] });
    await backend.generate(ask('execute'));
    expect(() => backend.assertComplete()).toThrow(/plan: 1 of 1 unused; execute: 1 of 2 unused/);
  });

  it('records every request with a copy of its messages', async () => {
    const backend = new ScriptedBackend([reply('ok')]);
    const request = ask('execute', 'first');
    await backend.generate(request);
    request.messages.push({ role: 'user', content: 'later' });
    (request.messages[0] as { content: string }).content = 'changed';
    expect(backend.calls[0]?.messages).toEqual([{ role: 'user', content: 'first' }]);
    expect(backend.calls[0]?.purpose).toBe('execute');
  });

  it('estimates usage from characters by default and can report zero', async () => {
    const estimating = new ScriptedBackend([reply('abcdefgh')]);
    const usage = (await estimating.generate(ask('execute', 'x'.repeat(40)))).usage;
    expect(usage).toEqual({ inputTokens: 10, outputTokens: 2 });
    const zero = new ScriptedBackend([reply('abcdefgh')], { usage: 'zero' });
    expect((await zero.generate(ask('execute', 'x'.repeat(40)))).usage).toEqual({ inputTokens: 0, outputTokens: 0 });
    const explicit = new ScriptedBackend([{ ...reply('a'), usage: { inputTokens: 7, outputTokens: 3 } }]);
    expect((await explicit.generate(ask('execute'))).usage).toEqual({ inputTokens: 7, outputTokens: 3 });
  });

  it('exposes provider, model and context window options, validated', () => {
    const backend = new ScriptedBackend([], { contextWindow: 4_096, modelId: 'm', provider: 'p' });
    expect(backend).toMatchObject({ contextWindow: 4_096, modelId: 'm', provider: 'p' });
    expect(() => new ScriptedBackend([], { contextWindow: -1 })).toThrow(/contextWindow/);
  });

  it('streams text and tool-call deltas, then finish with the full result', async () => {
    const calls = toolCalls([
      { name: 'a', args: { x: 1 }, id: 'c1' },
      { name: 'b', args: '{}', id: 'c2' },
    ]);
    calls.message.content = 'Let me check';
    calls.message.reasoning = 'think';
    const backend = new ScriptedBackend([calls]);
    const parts: StreamPart[] = [];
    for await (const part of backend.stream(ask('execute'))) parts.push(part);
    const last = parts.at(-1);
    expect(last?.type).toBe('finish');
    const text = parts.flatMap((p) => (p.type === 'text-delta' ? [p.text] : [])).join('');
    expect(text).toBe('Let me check');
    expect(parts.find((p) => p.type === 'reasoning-delta')).toEqual({ type: 'reasoning-delta', text: 'think' });
    const args = (id: string) =>
      parts.flatMap((p) => (p.type === 'tool-call-delta' && p.id === id ? [p.argumentsDelta] : [])).join('');
    expect(args('c1')).toBe('{"x":1}');
    expect(args('c2')).toBe('{}');
    expect(
      parts.filter((p) => p.type === 'tool-call-delta' && p.name).map((p) => (p as { name: string }).name),
    ).toEqual(['a', 'b']);
    if (last?.type === 'finish') expect(last.result.message.toolCalls.map((c) => c.id)).toEqual(['c1', 'c2']);
  });

  it('rejects with aborted when the request signal aborts a pending step', async () => {
    const controller = new AbortController();
    const backend = new ScriptedBackend([() => new Promise(() => undefined)]);
    const pending = backend.generate({ ...ask('execute'), signal: controller.signal });
    controller.abort();
    expect((await harnessRejection(pending)).code).toBe('aborted');
    expect((await harnessRejection(backend.generate({ ...ask('execute'), signal: AbortSignal.abort() }))).code).toBe(
      'aborted',
    );
  });
});

describe('reply builders', () => {
  it('build text, tool-call and submit replies', () => {
    expect(reply('hi')).toEqual({
      message: { role: 'assistant', content: 'hi', toolCalls: [] },
      finishReason: 'stop',
      usage: { inputTokens: 0, outputTokens: 0 },
    });
    const one = toolCall('search', { q: 'x' }, 'id-1');
    expect(one.finishReason).toBe('tool-calls');
    expect(one.message.toolCalls).toEqual([{ id: 'id-1', name: 'search', arguments: '{"q":"x"}' }]);
    expect(toolCall('raw', '{broken').message.toolCalls[0]?.arguments).toBe('{broken');
    const many = toolCalls([{ name: 'a' }, { name: 'b', args: { y: 2 } }]);
    const ids = many.message.toolCalls.map((c) => c.id);
    expect(new Set(ids).size).toBe(2);
    expect(JSON.parse(submit('done', ['a.txt']).message.toolCalls[0]!.arguments)).toEqual({
      answer: 'done',
      files: ['a.txt'],
    });
    expect(submit('done').message.toolCalls[0]?.name).toBe('submit_answer');
  });

  it('build planner and verifier JSON replies', () => {
    const full = { title: 't', objective: 'o', expectedOutput: 'e' };
    expect(JSON.parse(planOf('a', full).message.content).subtasks[1]).toEqual(full);
    expect(
      JSON.parse(verdict(false, ['missing chart', { description: 'typo', artifact: 'r.md' }]).message.content),
    ).toEqual({
      passed: false,
      defects: [{ description: 'missing chart' }, { description: 'typo', artifact: 'r.md' }],
    });
    expect(JSON.parse(verdict(true).message.content)).toEqual({ passed: true, defects: [] });
  });
});
