import type { Message } from '../backend/types.js';
import { isModelRound, splitRounds } from './rounds.js';

/** What a compression keeps and what it replaces with a summary. */
export interface CompressionPlan {
  /** The protected prefix, re-attached verbatim. */
  prefix: Message[];
  /** The earlier rounds (including an earlier summary) to be summarised; empty when there is nothing to compress. */
  older: Message[];
  /** The last `keepRecentRounds` rounds, kept verbatim. */
  recent: Message[];
  /** How many rounds `older` holds. */
  roundsSummarized: number;
}

/** Splits a dialogue for compression: earlier rounds to summarise, the last `keepRecentRounds` rounds to keep. */
export function planCompression(
  messages: readonly Message[],
  protectedCount: number,
  keepRecentRounds: number,
): CompressionPlan {
  const { prefix, rounds } = splitRounds(messages, protectedCount);
  const split = Math.max(0, rounds.length - keepRecentRounds);
  return {
    prefix,
    older: rounds.slice(0, split).flat(),
    recent: rounds.slice(split).flat(),
    roundsSummarized: split,
  };
}

/** The outcome of {@link emergencyPrune}. */
export interface PruneResult {
  messages: Message[];
  /** Tokens of the returned messages by the given counter. */
  tokens: number;
  /** Messages dropped entirely (shrunk ones are not counted). */
  messagesRemoved: number;
  /** False when even the prefix and the last round exceed the budget. */
  fits: boolean;
}

const PRUNED_PREFIX = '[pruned]';
const SAVED_PATH = /\.harness\/outputs\/[\w.-]+\.txt(?: lines \d+-\d+)?/;

/** True for a tool message that already is a one-line placeholder. */
export function isPrunedOutput(message: Message): boolean {
  return typeof message.content === 'string' && message.content.startsWith(PRUNED_PREFIX);
}

/** A one-line stand-in for an old tool result, naming the saved full output when the observation named one. */
export function prunedToolMessage(message: Extract<Message, { role: 'tool' }>): Message {
  const text = typeof message.content === 'string' ? message.content : '';
  const saved = SAVED_PATH.exec(text)?.[0];
  const where = saved ? ` Full output: ${saved} (read_file it if needed).` : '';
  return {
    ...message,
    content: `${PRUNED_PREFIX} Earlier ${message.toolName} output removed to fit the context window.${where}`,
  };
}

/**
 * Deterministic emergency pruning: removes the lowest-value history first until the messages fit
 * `budget` tokens. In order, oldest first: old tool outputs become one-line placeholders; old reasoning text is
 * dropped (the calls stay); whole old rounds are dropped; finally a leading round such as an earlier
 * summary. The protected prefix and the last round are never touched, a tool call never loses its
 * results, and the kept messages stay in order. Pure: `count` gives one message's tokens.
 */
export function emergencyPrune(
  messages: readonly Message[],
  protectedCount: number,
  budget: number,
  count: (message: Message) => number,
): PruneResult {
  const { prefix, rounds } = splitRounds(messages, protectedCount);
  let total = 0;
  for (const message of messages) total += count(message);
  const older = rounds.slice(0, -1).map((round) => round.slice());
  const last = rounds.at(-1) ?? [];
  const finish = (removed: number, dropped: ReadonlySet<number>): PruneResult => ({
    messages: [...prefix, ...older.filter((_, i) => !dropped.has(i)).flat(), ...last],
    tokens: total,
    messagesRemoved: removed,
    fits: total <= budget,
  });
  const none = new Set<number>();
  if (total <= budget) return { messages: messages.slice(), tokens: total, messagesRemoved: 0, fits: true };

  const replace = (round: Message[], index: number, next: Message) => {
    total += count(next) - count(round[index] as Message);
    round[index] = next;
  };
  for (const round of older) {
    for (let i = 0; i < round.length; i++) {
      const message = round[i] as Message;
      if (message.role === 'tool' && !isPrunedOutput(message)) replace(round, i, prunedToolMessage(message));
      if (total <= budget) return finish(0, none);
    }
  }
  for (const round of older) {
    const head = round[0];
    if (head?.role === 'assistant' && head.content.length > 0 && head.toolCalls && head.toolCalls.length > 0) {
      replace(round, 0, { ...head, content: '' });
      if (total <= budget) return finish(0, none);
    }
  }
  const dropped = new Set<number>();
  let removed = 0;
  const order = [
    ...older.flatMap((round, i) => (isModelRound(round) ? [i] : [])),
    ...older.flatMap((round, i) => (isModelRound(round) ? [] : [i])),
  ];
  for (const i of order) {
    const round = older[i] as Message[];
    for (const message of round) total -= count(message);
    removed += round.length;
    dropped.add(i);
    if (total <= budget) break;
  }
  return finish(removed, dropped);
}
