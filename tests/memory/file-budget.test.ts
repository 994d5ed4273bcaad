import { describe, expect, it } from 'vitest';
import type { Message, ToolSpec } from '../../src/backend/types.js';
import { MemoryManager } from '../../src/memory/memory-manager.js';
import type { MemoryScope } from '../../src/memory/types.js';
import { fakeBackend, hostWorkspace, invocation, quarterTokenizer, round, scopeFor } from './helpers.js';

const tools: ToolSpec[] = [{ name: 'probe', description: 'probe', inputSchema: { type: 'object' } }];
const prefix: Message[] = [
  { role: 'system', content: 'You are an agent.' },
  { role: 'user', content: 'ORIGINAL REQUEST: read the reports' },
];

/** A round that read a file: the call and its (bounded) result. */
const readRound = (id: string, content: string): Message[] => [
  { role: 'assistant', content: `reading ${id}`, toolCalls: [{ id, name: 'read_file', arguments: '{}' }] },
  { role: 'tool', toolCallId: id, toolName: 'read_file', content },
];

/** Reads three 30 000-character files in one scope with a 3 000-token budget, and returns the dialogue they make. */
async function spendBudget(memory: MemoryManager, scope: MemoryScope) {
  const dialogue: Message[] = [...prefix];
  const previews: string[] = [];
  for (const id of ['f1', 'f2', 'f3']) {
    const preview = await memory.boundObservation(invocation('r'.repeat(30_000), 'file', id), scope);
    previews.push(preview);
    dialogue.push(...readRound(id, preview));
  }
  // The budget is spent: the third read is a short glimpse.
  expect(previews[2]!.length).toBeLessThanOrEqual(1_000);
  // Later rounds push the reads out of the recent rounds and the dialogue over the window's threshold.
  for (let i = 0; i < 6; i++) dialogue.push(...round(`later${i}`, ['o'.repeat(20_000)]));
  return { dialogue, previews };
}

describe('the file-preview budget of a scope', () => {
  const options = { tokenizer: quarterTokenizer, fileParserTokens: 3_000 };
  const read = (memory: MemoryManager, scope: MemoryScope, id: string) =>
    memory.boundObservation(invocation('n'.repeat(30_000), 'file', id), scope);

  it('refills when a compression summarised the previews it paid for', async () => {
    const memory = new MemoryManager(options);
    const scope = scopeFor(
      fakeBackend(32_000, () => 'Read f1-f3: three reports.'),
      hostWorkspace(),
    );
    const { dialogue, previews } = await spendBudget(memory, scope);
    await memory.fitRequest({ messages: dialogue, tools, protectedCount: 2 }, scope);
    expect(scope.events.some((e) => e.type === 'memory-compress')).toBe(true);
    const again = await read(memory, scope, 'f4');
    expect(again.length).toBe(previews[0]!.length);
    expect(again).not.toContain('file-preview budget');
  });

  it('refills when a prune removed them', async () => {
    const memory = new MemoryManager(options);
    const scope = scopeFor(
      fakeBackend(32_000, () => ''),
      hostWorkspace(),
    );
    const { dialogue, previews } = await spendBudget(memory, scope);
    const fitted = await memory.fitRequest({ messages: dialogue, tools, protectedCount: 2 }, scope);
    expect(scope.events).toContainEqual(expect.objectContaining({ type: 'memory-prune', reason: 'summary-failed' }));
    expect(fitted.some((m) => m.role === 'tool' && m.toolCallId === 'f1' && m.content === previews[0])).toBe(false);
    expect((await read(memory, scope, 'f4')).length).toBe(previews[0]!.length);
  });

  it('gives back only what left the dialogue', async () => {
    const memory = new MemoryManager({ ...options, keepRecentRounds: 2 });
    const scope = scopeFor(
      fakeBackend(32_000, () => 'Read f1.'),
      hostWorkspace(),
    );
    const first = await read(memory, scope, 'f1');
    const second = await read(memory, scope, 'f2');
    expect(second.length).toBeLessThan(first.length);
    const dialogue: Message[] = [
      ...prefix,
      ...readRound('f1', first),
      ...round('big1', ['o'.repeat(60_000)]),
      ...round('big2', ['o'.repeat(60_000)]),
      ...readRound('f2', second),
    ];
    await memory.fitRequest({ messages: dialogue, tools, protectedCount: 2 }, scope);
    expect(scope.events.some((e) => e.type === 'memory-compress')).toBe(true);
    // f1's preview was summarised away; f2's is still in the dialogue and still counts.
    const third = await read(memory, scope, 'f3');
    expect(quarterTokenizer.count(third)).toBeLessThanOrEqual(3_000 - quarterTokenizer.count(second) + 50);
    expect(third.length).toBeGreaterThan(second.length);
  });

  it('refills when observation aging collapsed the previews', async () => {
    const memory = new MemoryManager({ ...options, observationAging: { keepRecentRounds: 1 } });
    const scope = scopeFor(fakeBackend(128_000), hostWorkspace());
    const { dialogue, previews } = await spendBudget(memory, scope);
    await memory.fitRequest({ messages: dialogue, tools, protectedCount: 2 }, scope);
    expect((await read(memory, scope, 'f4')).length).toBe(previews[0]!.length);
  });

  it('shares a reply of parallel reads: the reads after the first see its preview spent', async () => {
    const memory = new MemoryManager(options);
    const scope = scopeFor(fakeBackend(32_000), hostWorkspace());
    const previews = await Promise.all(['p1', 'p2', 'p3'].map((id) => read(memory, scope, id)));
    const tokens = previews.map((p) => quarterTokenizer.count(p));
    expect(tokens[0]! + tokens[1]!).toBeLessThanOrEqual(3_000 + 50);
    expect(previews[2]!.length).toBeLessThanOrEqual(1_000);
  });
});
