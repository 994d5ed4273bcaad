import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/backend/types.js';
import { splitRounds } from '../../src/memory/rounds.js';
import { round } from './helpers.js';

describe('splitRounds', () => {
  const prefix: Message[] = [
    { role: 'system', content: 'sys' },
    { role: 'user', content: 'task' },
  ];

  it('splits after the protected prefix into assistant-led rounds holding their tool results', () => {
    const r1 = round('r1', ['a', 'b']);
    const r2 = round('r2', ['c']);
    const { prefix: kept, rounds } = splitRounds([...prefix, ...r1, ...r2], 2);
    expect(kept).toEqual(prefix);
    expect(rounds).toEqual([r1, r2]);
  });

  it('puts messages before the first assistant turn in a leading round and a user note in its round', () => {
    const summary: Message = { role: 'user', content: 'summary' };
    const note: Message = { role: 'user', content: 'please submit' };
    const r1 = round('r1', ['a']);
    const { rounds } = splitRounds([...prefix, summary, ...r1, note], 2);
    expect(rounds).toEqual([[summary], [...r1, note]]);
  });

  it('concatenates back to the dialogue', () => {
    const dialogue = [...prefix, ...round('a', ['1']), ...round('b', ['2', '3'])];
    const { prefix: p, rounds } = splitRounds(dialogue, 2);
    expect([...p, ...rounds.flat()]).toEqual(dialogue);
  });
});
