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
});
