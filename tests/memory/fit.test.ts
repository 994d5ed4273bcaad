import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/backend/types.js';
import { emergencyPrune, isPrunedOutput, planCompression, prunedToolMessage } from '../../src/memory/fit.js';
import { round } from './helpers.js';
import { expectWellFormed } from './well-formed.js';

const count = (message: Message) =>
  4 + Math.ceil((typeof message.content === 'string' ? message.content.length : 1000) / 4);
const total = (messages: readonly Message[]) => messages.reduce((sum, m) => sum + count(m), 0);
const prefix: Message[] = [
  { role: 'system', content: 'system prompt' },
  { role: 'user', content: 'the original request, verbatim' },
];

describe('planCompression', () => {
  it('keeps the last rounds verbatim and hands the earlier ones (with an earlier summary) to the summariser', () => {
    const summary: Message = { role: 'user', content: 'old summary' };
    const rounds = [round('a', ['1']), round('b', ['2']), round('c', ['3']), round('d', ['4'])];
    const plan = planCompression([...prefix, summary, ...rounds.flat()], 2, 2);
    expect(plan.prefix).toEqual(prefix);
    expect(plan.older).toEqual([summary, ...rounds[0]!, ...rounds[1]!]);
    expect(plan.recent).toEqual([...rounds[2]!, ...rounds[3]!]);
    expect(plan.roundsSummarized).toBe(3);
  });

  it('has nothing to summarise when there are no more rounds than it keeps', () => {
    const plan = planCompression([...prefix, ...round('a', ['1'])], 2, 3);
    expect(plan.older).toEqual([]);
  });
});

describe('emergencyPrune', () => {
  it('returns the dialogue unchanged when it fits', () => {
    const dialogue = [...prefix, ...round('a', ['x'])];
    const result = emergencyPrune(dialogue, 2, 10_000, count);
    expect(result).toMatchObject({ messages: dialogue, messagesRemoved: 0, fits: true });
  });

  it('stubs old tool outputs before it drops reasoning, and names the saved output', () => {
    const big = `head .harness/outputs/subtask-1-a-0.txt ${'x'.repeat(4000)}`;
    const dialogue = [...prefix, ...round('a', [big]), ...round('b', ['y'.repeat(4000)])];
    const result = emergencyPrune(dialogue, 2, total(dialogue) - 500, count);
    expect(result.fits).toBe(true);
    expect(result.messagesRemoved).toBe(0);
    const stub = result.messages[3]!;
    expect(isPrunedOutput(stub)).toBe(true);
    expect(stub.content).toContain('.harness/outputs/subtask-1-a-0.txt');
    expect(result.messages[2]).toBe(dialogue[2]);
    expect(result.messages.slice(4)).toEqual(dialogue.slice(4));
  });

  it('drops whole old rounds oldest first, an earlier summary last, and never the last round', () => {
    const summary: Message = { role: 'user', content: 's'.repeat(400) };
    const a = round('a', ['1'.repeat(400)]);
    const b = round('b', ['2'.repeat(400)]);
    const last = round('c', ['3'.repeat(4000)]);
    const dialogue = [...prefix, summary, ...a, ...b, ...last];
    const tight = emergencyPrune(dialogue, 2, total([...prefix, summary, ...last]) + 20, count);
    expect(tight.fits).toBe(true);
    expect(tight.messages).toEqual([...prefix, summary, ...last]);
    const tighter = emergencyPrune(dialogue, 2, total([...prefix, ...last]), count);
    expect(tighter.messages).toEqual([...prefix, ...last]);
    expect(tighter.messagesRemoved).toBe(5);
    const impossible = emergencyPrune(dialogue, 2, total([...prefix, ...last]) - 1, count);
    expect(impossible.fits).toBe(false);
    expect(impossible.messages.slice(-2)).toEqual(last);
  });

  it('stubs the oldest tool output first', () => {
    const a = round('a', ['1'.repeat(4000)]);
    const b = round('b', ['2'.repeat(4000)]);
    const last = round('c', ['3'.repeat(400)]);
    const dialogue = [...prefix, ...a, ...b, ...last];
    const result = emergencyPrune(dialogue, 2, total(dialogue) - 500, count);
    expect(isPrunedOutput(result.messages[3]!)).toBe(true);
    expect(result.messages[5]).toBe(dialogue[5]);
  });

  it('drops the oldest model round first', () => {
    const a = round('a', ['1'.repeat(400)]);
    const b = round('b', ['2'.repeat(400)]);
    const last = round('c', ['3'.repeat(400)]);
    const dialogue = [...prefix, ...a, ...b, ...last];
    const b0 = b[0] as Extract<Message, { role: 'assistant' }>;
    const expected = [
      ...prefix,
      { ...b0, content: '' },
      prunedToolMessage(b[1] as Extract<Message, { role: 'tool' }>),
      ...last,
    ];
    const result = emergencyPrune(dialogue, 2, total(expected), count);
    expect(result.fits).toBe(true);
    expect(result.messagesRemoved).toBe(2);
    expect(result.messages).toEqual(expected);
  });
});

/** A random dialogue: rounds with parallel calls and outputs of random sizes, sometimes user notes. */
const dialogueArb = fc
  .array(
    fc.record({
      outputs: fc.array(fc.integer({ min: 0, max: 6000 }), { minLength: 0, maxLength: 4 }),
      reasoning: fc.integer({ min: 0, max: 800 }),
      note: fc.boolean(),
    }),
    { minLength: 0, maxLength: 25 },
  )
  .map((specs) => {
    const messages: Message[] = [...prefix];
    specs.forEach((spec, r) => {
      const calls = spec.outputs.map((_, i) => ({ id: `c${r}-${i}`, name: 'probe', arguments: '{}' }));
      messages.push({
        role: 'assistant',
        content: `r${r} ${'t'.repeat(spec.reasoning)}`,
        ...(calls.length ? { toolCalls: calls } : {}),
      });
      spec.outputs.forEach((size, i) =>
        messages.push({ role: 'tool', toolCallId: `c${r}-${i}`, toolName: 'probe', content: 'o'.repeat(size) }),
      );
      if (spec.note) messages.push({ role: 'user', content: `note ${r}` });
    });
    return messages;
  });

describe('emergencyPrune properties', () => {
  it('fits whenever prefix + last round fit, keeps the protected prefix, order and call/result pairs', () => {
    fc.assert(
      fc.property(dialogueArb, fc.integer({ min: 50, max: 40_000 }), (dialogue, budget) => {
        const result = emergencyPrune(dialogue, 2, budget, count);
        expect(result.tokens).toBe(total(result.messages));
        // The last round (the results the model just asked for) is kept as it was, at the end.
        const lastStart = Math.max(
          2,
          dialogue.findLastIndex((m, i) => i >= 2 && m.role === 'assistant'),
        );
        const lastRound = dialogue.slice(lastStart);
        const tail = result.messages.slice(result.messages.length - lastRound.length);
        lastRound.forEach((message, i) => expect(tail[i]).toBe(message));
        const lastAssistant = dialogue.findLastIndex((m, i) => i >= 2 && m.role === 'assistant');
        const floor =
          total(prefix) + (lastAssistant >= 0 ? total(dialogue.slice(lastAssistant)) : total(dialogue.slice(2)));
        if (floor <= budget) {
          expect(result.fits).toBe(true);
          expect(result.tokens).toBeLessThanOrEqual(budget);
        } else {
          expect(result.fits).toBe(false);
        }
        expectWellFormed(dialogue, result.messages, 2);
      }),
      { numRuns: 300 },
    );
  });
});
