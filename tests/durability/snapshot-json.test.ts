import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/backend/types.js';
import { snapshotJson } from '../../src/durability/snapshot-json.js';
import type { LoopCheckpoint, RunSnapshot } from '../../src/durability/types.js';

const message: fc.Arbitrary<Message> = fc.oneof(
  fc.record({ role: fc.constant('user' as const), content: fc.string({ unit: 'binary' }) }),
  fc.record({
    role: fc.constant('assistant' as const),
    content: fc.string(),
    toolCalls: fc.array(fc.record({ id: fc.string(), name: fc.string(), arguments: fc.json() }), { maxLength: 2 }),
  }),
  fc.record({
    role: fc.constant('tool' as const),
    content: fc.string({ unit: 'binary' }),
    toolCallId: fc.string(),
    toolName: fc.string(),
  }),
);

/** An executor loop's checkpoint of scope `scope` holding `dialogue`. */
function loopWith(scope: string, dialogue: Message[]): LoopCheckpoint {
  return {
    purpose: 'execute',
    scope,
    iterations: 1,
    dialogue,
    usage: { inputTokens: 0, outputTokens: 0 },
    peakRequestTokens: 0,
    lastText: '',
    cutOff: '',
    toolFiles: [],
    invalid: { key: null, count: 0 },
    toolCalls: [],
  };
}

/** A snapshot whose first loop holds `dialogue`; `others` are the dialogues of further loops (parallel subtasks). */
function snapshotWith(dialogue: Message[], state: unknown, others: Message[][] = []): RunSnapshot {
  return {
    format: 2,
    library: '0.0.0',
    runId: 'r',
    mode: 'pipeline',
    fingerprint: { hash: 'h', fields: {} },
    savedAt: 1,
    seq: 1,
    status: 'running',
    input: { task: 't', attachments: [] },
    workspace: '/w',
    dataMark: '0123456789abcdef',
    used: { iterations: 0, elapsedMs: 0 },
    state,
    loops: [loopWith('s', dialogue), ...others.map((other, index) => loopWith(`s${index + 2}`, other))],
  };
}

describe('snapshotJson', () => {
  it('is JSON.stringify byte for byte, on a first save and on a later one that reuses cached messages', () => {
    fc.assert(
      fc.property(
        fc.array(message, { maxLength: 8 }),
        fc.array(message, { maxLength: 3 }),
        fc.jsonValue(),
        fc.array(fc.array(message, { maxLength: 3 }), { maxLength: 2 }),
        (a, b, state, others) => {
          const first = snapshotWith(a, state, others);
          expect(snapshotJson(first)).toBe(JSON.stringify(first));
          const later = snapshotWith([...a, ...b], { state, dialogue: 'a text field named dialogue' }, others);
          expect(snapshotJson(later)).toBe(JSON.stringify(later));
        },
      ),
    );
  });

  it('keeps text that looks like its own stand-in for a dialogue as it is', () => {
    const tricky = '\u0000dialogue-0000000000000000-0"';
    const snapshot = snapshotWith([{ role: 'user', content: tricky }], { note: tricky });
    expect(JSON.parse(snapshotJson(snapshot))).toEqual(JSON.parse(JSON.stringify(snapshot)));
  });

  it('throws as JSON.stringify does for a value that is not plain JSON', () => {
    expect(() => snapshotJson(snapshotWith([], { big: 1n }))).toThrow(TypeError);
  });
});
