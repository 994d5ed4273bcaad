import type { Message } from '../backend/types.js';

/** A dialogue split into its protected prefix and the rounds after it. */
export interface DialogueRounds {
  /** The first `protectedCount` messages, never summarised or pruned. */
  prefix: Message[];
  /**
   * The rest, in order. A round starts at an assistant message and holds every message up to the next
   * assistant message (the tool results answering its calls, and any user note in between), so a tool
   * call and its results always share a round. Messages between the prefix and the first assistant
   * message (such as an earlier summary) form a leading round of their own.
   */
  rounds: Message[][];
}

/** Splits a dialogue into protected prefix + rounds; concatenating them gives the dialogue back. */
export function splitRounds(messages: readonly Message[], protectedCount: number): DialogueRounds {
  const cut = Math.max(0, Math.min(protectedCount, messages.length));
  const prefix = messages.slice(0, cut);
  const rounds: Message[][] = [];
  let current: Message[] | undefined;
  for (let i = cut; i < messages.length; i++) {
    const message = messages[i] as Message;
    if (message.role === 'assistant' || !current) {
      current = [];
      rounds.push(current);
    }
    current.push(message);
  }
  return { prefix, rounds };
}

/** True when a round starts with a model turn (as opposed to a leading round such as a summary). */
export function isModelRound(round: readonly Message[]): boolean {
  return round[0]?.role === 'assistant';
}
