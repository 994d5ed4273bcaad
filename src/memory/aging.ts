import type { Message } from '../backend/types.js';
import { splitRounds } from './rounds.js';

const AGED_PREFIX = '[aged]';
/** Tool results shorter than this stay as they are: a digest would not be much shorter. */
const MIN_AGE_CHARS = 400;

/** True for a tool message that already is an aged digest. */
export function isAged(message: Message): boolean {
  return typeof message.content === 'string' && message.content.startsWith(AGED_PREFIX);
}

function digestOf(message: Extract<Message, { role: 'tool' }>, savedTo: string | undefined): string {
  const text =
    typeof message.content === 'string'
      ? message.content
      : message.content.map((part) => (part.type === 'text' ? part.text : '[image]')).join(' ');
  const where = savedTo ? `full output: ${savedTo} (read_file it to see it again)` : 'full output not saved';
  // No excerpt: the output is untrusted, and a digest outside its marked block must not carry any of it.
  return `${AGED_PREFIX} ${message.toolName} result (${text.length} chars) collapsed; ${where}.`;
}

/** True for a tool result that aging collapses once its round is old: not aged yet, and long enough to be worth it. */
function ageable(message: Message): message is Extract<Message, { role: 'tool' }> {
  return (
    message.role === 'tool' &&
    !isAged(message) &&
    (typeof message.content !== 'string' || message.content.length >= MIN_AGE_CHARS)
  );
}

/**
 * Observation aging: tool results older than the last `keepRecentRounds` rounds collapse to a one-line
 * digest naming the saved full output (`savedTo(toolCallId)`). Each aging rewrites the dialogue from its first
 * collapsed result on, so results age in batches: nothing happens until at least `batchRounds` old rounds hold a
 * result to collapse, and then all of them collapse at once (1, the default: every step). Pure; unchanged messages
 * keep their identity, and the protected prefix is never touched.
 */
export function ageObservations(
  messages: readonly Message[],
  protectedCount: number,
  keepRecentRounds: number,
  savedTo: (toolCallId: string) => string | undefined,
  batchRounds = 1,
): Message[] {
  const { prefix, rounds } = splitRounds(messages, protectedCount);
  const old = rounds.slice(0, Math.max(0, rounds.length - keepRecentRounds));
  const waiting = old.filter((round) => round.some(ageable)).length;
  if (waiting === 0 || waiting < batchRounds) return messages.slice();
  const aged = old.map((round) =>
    round.map((message) =>
      ageable(message) ? { ...message, content: digestOf(message, savedTo(message.toolCallId)) } : message,
    ),
  );
  return [...prefix, ...aged.flat(), ...rounds.slice(old.length).flat()];
}
