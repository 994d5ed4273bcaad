import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/backend/types.js';
import { ageObservations, isAged } from '../../src/memory/aging.js';
import { round } from './helpers.js';

const prefix: Message[] = [
  { role: 'system', content: 'sys' },
  { role: 'user', content: 'x'.repeat(1000) },
];

describe('ageObservations', () => {
  it('collapses tool results older than the last rounds to a digest naming the saved output', () => {
    const rounds = [round('a', ['A'.repeat(2000)]), round('b', ['B'.repeat(2000)]), round('c', ['C'.repeat(2000)])];
    const aged = ageObservations([...prefix, ...rounds.flat()], 2, 2, (id) => `.harness/outputs/subtask-1-${id}.txt`);
    expect(aged.slice(0, 2)).toEqual(prefix);
    expect(aged[2]).toBe(rounds[0]![0]);
    expect(isAged(aged[3]!)).toBe(true);
    expect(aged[3]!.content).toContain('.harness/outputs/subtask-1-a-0.txt');
    // The output is untrusted: its digest names where it is saved and carries none of it.
    expect(aged[3]!.content).not.toContain('AAAA');
    expect((aged[3]!.content as string).length).toBeLessThan(400);
    expect(aged.slice(4)).toEqual([...rounds[1]!, ...rounds[2]!]);
    expect(aged[4]).toBe(rounds[1]![0]);
  });

  it('leaves short results, already aged ones and recent rounds as they are', () => {
    const dialogue = [...prefix, ...round('a', ['short']), ...round('b', ['B'.repeat(2000)])];
    const once = ageObservations(dialogue, 2, 1, () => undefined);
    expect(once[3]).toBe(dialogue[3]);
    expect(once[5]).toBe(dialogue[5]);
    const moved = [...once, ...round('c', ['C'])];
    const twice = ageObservations(moved, 2, 1, () => undefined);
    expect(twice[5]!.content).toContain('full output not saved');
    const thrice = ageObservations(twice, 2, 1, () => 'later.txt');
    expect(thrice[5]).toBe(twice[5]);
  });

  it('ages in batches: nothing until batchRounds old rounds hold a result to age, then all of them at once', () => {
    const rounds = ['a', 'b', 'c', 'd', 'e'].map((id) => round(id, [id.repeat(2000)]));
    const dialogue = (count: number) => [...prefix, ...rounds.slice(0, count).flat()];
    // Two rounds kept whole: with 4 rounds, 2 are old; the batch of 3 is not full yet.
    const waiting = ageObservations(dialogue(4), 2, 2, () => undefined, 3);
    expect(waiting).toEqual(dialogue(4));
    waiting.forEach((message, i) => expect(message).toBe(dialogue(4)[i]));
    const full = ageObservations(dialogue(5), 2, 2, () => undefined, 3);
    expect([3, 5, 7].map((i) => isAged(full[i]!))).toEqual([true, true, true]);
    expect(full.slice(8)).toEqual(rounds.slice(3).flat());
    // Rounds already aged or holding only short results do not count towards the next batch.
    const later = ['g', 'h'].flatMap((id) => round(id, [id.repeat(2000)]));
    const next = [...full, ...round('f', ['short']), ...later];
    // Old now: a–c (aged), d and e (waiting) and f (short): 2 rounds wait, a batch of 3 is not full.
    expect(ageObservations(next, 2, 2, () => undefined, 3)).toEqual(next);
  });
});
