import { expect } from 'vitest';
import type { Message } from '../../src/backend/types.js';

/** The identity of a message that survives stubbing and reasoning removal. */
export function identity(message: Message): string {
  if (message.role === 'tool') return `tool:${message.toolCallId}`;
  if (message.role === 'assistant') return `assistant:${message.toolCalls?.[0]?.id ?? message.content}`;
  return `${message.role}:${typeof message.content === 'string' ? message.content : ''}`;
}

/** Asserts the structural guarantees of a fitted dialogue against its original. */
export function expectWellFormed(
  original: readonly Message[],
  fitted: readonly Message[],
  protectedCount: number,
  skip?: (m: Message) => boolean,
): void {
  for (let i = 0; i < protectedCount; i++) expect(fitted[i]).toBe(original[i]);
  const positions = new Map(original.map((m, i) => [identity(m), i]));
  let previous = -1;
  for (const message of fitted.slice(protectedCount)) {
    if (skip?.(message)) continue;
    const position = positions.get(identity(message));
    expect(position).toBeDefined();
    expect(position!).toBeGreaterThan(previous);
    previous = position!;
  }
  const callsIn = (messages: readonly Message[]) =>
    new Map(
      messages.flatMap((m, i) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => [c.id, i] as const) : [])),
    );
  const fittedCalls = callsIn(fitted);
  const originalResults = new Set(original.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])));
  fitted.forEach((m, i) => {
    if (m.role !== 'tool') return;
    const at = fittedCalls.get(m.toolCallId);
    expect(at, `result ${m.toolCallId} kept without its call`).toBeDefined();
    expect(at!).toBeLessThan(i);
  });
  const fittedResults = new Set(fitted.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])));
  for (const id of fittedCalls.keys()) {
    if (originalResults.has(id)) expect(fittedResults.has(id), `call ${id} kept without its result`).toBe(true);
  }
}
