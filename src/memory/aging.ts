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

/**
 * Observation aging: tool results older than the last `keepRecentRounds` rounds collapse to a one-line
 * digest naming the saved full output (`savedTo(toolCallId)`). Pure; unchanged messages keep their
 * identity, and the protected prefix is never touched.
 */
export function ageObservations(
  messages: readonly Message[],
  protectedCount: number,
  keepRecentRounds: number,
  savedTo: (toolCallId: string) => string | undefined,
): Message[] {
  const { prefix, rounds } = splitRounds(messages, protectedCount);
  const cutoff = rounds.length - keepRecentRounds;
  if (cutoff <= 0) return messages.slice();
  const out = prefix.slice();
  rounds.forEach((round, index) => {
    for (const message of round) {
      const old =
        index < cutoff &&
        message.role === 'tool' &&
        !isAged(message) &&
        (typeof message.content !== 'string' || message.content.length >= MIN_AGE_CHARS);
      if (old && message.role === 'tool') {
        out.push({ ...message, content: digestOf(message, savedTo(message.toolCallId)) });
      } else {
        out.push(message);
      }
    }
  });
  return out;
}
