import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { askJson } from '../../src/json/ask-json.js';
import { extractJson } from '../../src/json/extract-json.js';
import { parseJsonReply } from '../../src/json/parse-json-reply.js';
import { reply } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';

const Shape = z.object({ passed: z.boolean() });

describe('extractJson', () => {
  it.each([
    ['bare JSON', '{"a":1}', { a: 1 }],
    ['a code fence', 'Here:\n```json\n{"a":2}\n```\nDone.', { a: 2 }],
    ['leading prose', 'My verdict is {"a":3} as requested', { a: 3 }],
    ['braces inside strings', 'ok {"a":"} tricky {"} and more', { a: '} tricky {' }],
    ['an array', 'list: [1,2]', [1, 2]],
  ])('finds JSON in %s', (_name, text, expected) => {
    expect(extractJson(text)).toEqual(expected);
  });

  it('returns undefined when nothing parses', () => {
    expect(extractJson('no json { here')).toBeUndefined();
  });
});

describe('parseJsonReply', () => {
  it('names the failing field in its error', () => {
    const parsed = parseJsonReply('{"passed":"yes"}', Shape);
    expect(parsed).toEqual({ ok: false, error: expect.stringContaining('passed') });
  });
});

describe('askJson', () => {
  const context = (backend: ScriptedBackend) => ({
    backend,
    purpose: 'verify' as const,
    runId: 'r',
    scope: 'verify-1',
  });

  it('re-asks once quoting the validation error and accepts the fixed reply', async () => {
    const backend = new ScriptedBackend({ verify: [reply('{"passed":"yes"}'), reply('{"passed":true}')] });
    const result = await askJson(context(backend), [{ role: 'user', content: 'judge' }], Shape);
    expect(result).toEqual({ ok: true, value: { passed: true }, calls: 2 });
    const retry = backend.calls[1]!.messages;
    expect(retry.at(-2)).toEqual({ role: 'assistant', content: '{"passed":"yes"}' });
    expect(retry.at(-1)?.content).toContain('passed');
    expect(backend.calls.every((c) => c.purpose === 'verify')).toBe(true);
  });

  it('gives up after the one re-ask', async () => {
    const backend = new ScriptedBackend({ verify: [reply('nope'), reply('still nope')] });
    const result = await askJson(context(backend), [{ role: 'user', content: 'judge' }], Shape);
    expect(result).toMatchObject({ ok: false, calls: 2, lastReply: 'still nope' });
    backend.assertComplete();
  });
});

describe('parseJsonReply with prose holding other JSON', () => {
  it('takes the first candidate that validates, not the first that parses', () => {
    const text = 'As noted in [1] and {"draft": true}, my verdict:\n{"passed": true}';
    expect(parseJsonReply(text, Shape)).toEqual({ ok: true, value: { passed: true } });
  });

  it('costs no re-ask when the valid object follows a citation', async () => {
    const backend = new ScriptedBackend({ verify: [reply('See [1].\n{"passed": false}')] });
    const result = await askJson(
      { backend, purpose: 'verify', runId: 'r', scope: 'verify-1' },
      [{ role: 'user', content: 'x' }],
      Shape,
    );
    expect(result).toEqual({ ok: true, value: { passed: false }, calls: 1 });
  });
});
