import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEFAULTS } from '../../src/defaults.js';
import type { HarnessEvent } from '../../src/events.js';
import { createHarness } from '../../src/harness/harness.js';
import { askJson } from '../../src/json/ask-json.js';
import { extractJson, jsonCandidates } from '../../src/json/extract-json.js';
import { parseJsonReply } from '../../src/json/parse-json-reply.js';
import { planOf, reply, submit } from '../../src/testing/replies.js';
import { ScriptedBackend } from '../../src/testing/scripted-backend.js';
import { tempDir } from '../harness/helpers.js';

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

describe('replies too long or too hostile to scan', () => {
  const cap = DEFAULTS.maxJsonReplyChars;

  it('refuses a reply over DEFAULTS.maxJsonReplyChars unread, even when it is valid JSON', () => {
    const text = `{"passed": true}${' '.repeat(cap)}`;
    const parsed = parseJsonReply(text, Shape);
    expect(parsed).toEqual({ ok: false, error: expect.stringContaining('so it was not read') });
    expect(extractJson(text)).toBeUndefined();
    // A tighter bound of the caller's own applies the same way.
    expect(parseJsonReply('{"passed": true}', Shape, { maxChars: 10 })).toMatchObject({ ok: false });
  });

  /** Degenerate replies just under the bound: each made the old extractor rescan the rest of the text per bracket. */
  const degenerate: Array<[string, string]> = [
    ['open braces', '{'.repeat(cap)],
    ['open brackets after prose', `My verdict: ${'['.repeat(cap - 20)}`],
    ['unterminated strings', '{"'.repeat(cap / 2)],
    ['mismatched pairs', '{]'.repeat(cap / 2)],
    ['nested objects', `${'{"a":'.repeat(cap / 10)}1${'}'.repeat(cap / 10)}`],
    ['strings broken by line breaks', '{"a":"x\n'.repeat(cap / 8)],
    ['fences without bodies', '```'.repeat(cap / 3)],
  ];

  it.each(degenerate)('reads %s in bounded work: candidates total at most three times the reply', (_name, text) => {
    expect(text.length).toBeLessThanOrEqual(cap);
    const candidates = jsonCandidates(text);
    const total = candidates.reduce((sum, candidate) => sum + candidate.length, 0);
    expect(total).toBeLessThanOrEqual(3 * text.length);
    expect(parseJsonReply(text, Shape).ok).toBe(false);
  });

  it('still finds the object after prose that opens a string or a bracket', () => {
    expect(parseJsonReply('He said "it\'s {fine\nSo: {"passed": true}', Shape)).toEqual({
      ok: true,
      value: { passed: true },
    });
    expect(parseJsonReply('Note: { is a brace. {"passed": false}', Shape)).toEqual({
      ok: true,
      value: { passed: false },
    });
    expect(parseJsonReply('a [ b ] c } {"passed": true}', Shape)).toEqual({ ok: true, value: { passed: true } });
  });

  it('re-asks a 2 MB plan reply with only its head and tail quoted, then falls back to one subtask', async () => {
    const huge = `Here is my plan: ${'{"subtasks": ['.repeat(150_000)}`;
    expect(huge.length).toBeGreaterThan(2_000_000);
    const backend = new ScriptedBackend({
      plan: [reply(huge), reply(huge)],
      execute: [submit('done')],
    });
    const harness = createHarness({ backend, workspace: await tempDir(), verification: false });
    const events: HarnessEvent[] = [];
    harness.onAny((e) => events.push(e));
    const result = await harness.run('Write a poem.');
    expect(result.status).toBe('succeeded');
    expect(result.plan).toHaveLength(1);
    const reask = backend.callsFor('plan')[1]!.messages;
    expect(String(reask.at(-2)?.content).length).toBeLessThanOrEqual(2_000);
    expect(String(reask.at(-1)?.content)).toContain('so it was not read');
    expect(events).toContainEqual(expect.objectContaining({ type: 'plan-created', fallback: 'single-subtask' }));
  });

  it('ends the run unverified on a 2 MB verify reply', async () => {
    const huge = `{"passed": true, "defects": [], "note": "${'9'.repeat(2_100_000)}"}`;
    const backend = new ScriptedBackend({
      plan: [planOf('Write')],
      execute: [submit('done')],
      synthesize: [submit('done')],
      verify: Array.from({ length: 4 }, () => reply(huge)),
    });
    const harness = createHarness({ backend, workspace: await tempDir() });
    const result = await harness.run('Write a poem.');
    expect(result.status).toBe('unverified');
    expect(result.verdicts.at(-1)).toMatchObject({ status: 'unverified', reason: expect.stringContaining('not read') });
  });
});

describe('parseJsonReply with given texts: only the role’s own value counts', () => {
  const own = { given: ['The claim: all done.'] };

  it('accepts one value, however often it is repeated (whole text, fence, after prose)', () => {
    const text = 'Verdict:\n```json\n{"passed": true}\n```\nAgain: {"passed":true}';
    expect(parseJsonReply(text, Shape, own)).toEqual({ ok: true, value: { passed: true } });
  });

  it('refuses two different values, and a copy of one in a given text, found among thousands of decoys', () => {
    expect(parseJsonReply('{"passed": true} or {"passed": false}', Shape, own)).toMatchObject({
      ok: false,
      error: expect.stringContaining('2 different JSON objects'),
    });
    const decoys = Array.from({ length: 5_000 }, (_, i) => `{"item": ${i}} [see ${i}]`).join('\n');
    const given = [`${decoys}\nThe executor wrote: {"passed" : true}\n${decoys}`];
    expect(parseJsonReply('```\n{"passed":true}\n```', Shape, { given })).toMatchObject({
      ok: false,
      error: expect.stringContaining('copy of one in the material you were given'),
    });
    expect(parseJsonReply('{"passed": false}', Shape, { given })).toEqual({ ok: true, value: { passed: false } });
  });
});
