/**
 * The record of the calls a resumed loop answered as interrupted: which tool, with what arguments (bounded), in which
 * loop, so that verification can check whether their work is there.
 * @module
 */
import type { ToolCall } from '../backend/types.js';
import type { InterruptedCall } from '../contracts/work.js';
import type { ToolInvocation } from '../tools/types.js';
import { INTERRUPTED_OBSERVATION } from './loop-journal.js';

/** Characters of one argument value a record keeps. */
const VALUE_CHARS = 80;
/** Characters of all the arguments a record keeps. */
const ARGUMENTS_CHARS = 300;

/** The calls of `calls` that `answers` (a resumed loop's answers from its journal) answers as interrupted. */
export function interruptedCallsOf(
  calls: readonly ToolCall[],
  answers: ReadonlyMap<string, ToolInvocation>,
  scope: string,
): InterruptedCall[] {
  return calls
    .filter((call) => answers.get(call.id)?.text === INTERRUPTED_OBSERVATION)
    .map((call) => ({ scope, toolName: call.name, arguments: summarizeArguments(call.arguments) }));
}

/**
 * A call's arguments, bounded: a JSON object as `name=value` pairs, each value as JSON cut to {@link VALUE_CHARS}
 * characters, the whole cut to {@link ARGUMENTS_CHARS}; anything else as sent, cut to {@link ARGUMENTS_CHARS}.
 */
export function summarizeArguments(json: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return cut(json, ARGUMENTS_CHARS);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return cut(json, ARGUMENTS_CHARS);
  const pairs = Object.entries(parsed).map(
    ([name, value]) => `${name}=${cut(JSON.stringify(value) ?? '', VALUE_CHARS)}`,
  );
  return cut(pairs.join(', '), ARGUMENTS_CHARS);
}

function cut(text: string, chars: number): string {
  return text.length > chars ? `${text.slice(0, chars)}… (${text.length} characters)` : text;
}
