import type { FinishReason, GenerateResult, ToolCall } from '../backend/types.js';
import type { Defect } from '../contracts/work.js';

let nextCallId = 1;

/** A tool call to script: arguments as a value (sent as JSON) or as raw text (sent as is, e.g. broken JSON). */
export interface ScriptedToolCall {
  name: string;
  args?: unknown;
  id?: string;
}

function result(content: string, toolCalls: ToolCall[], finishReason: FinishReason): GenerateResult {
  return {
    message: { role: 'assistant', content, toolCalls },
    finishReason,
    usage: { inputTokens: 0, outputTokens: 0 },
  };
}

function makeCall(call: ScriptedToolCall): ToolCall {
  return {
    id: call.id ?? `call_${nextCallId++}`,
    name: call.name,
    arguments: typeof call.args === 'string' ? call.args : JSON.stringify(call.args ?? {}),
  };
}

/** A plain text reply without tool calls. */
export function reply(text: string): GenerateResult {
  return result(text, [], 'stop');
}

/** A reply with one tool call; `args` as a string is sent verbatim, anything else as JSON. */
export function toolCall(name: string, args: unknown = {}, id?: string): GenerateResult {
  return result('', [makeCall({ name, args, ...(id === undefined ? {} : { id }) })], 'tool-calls');
}

/** A reply with several parallel tool calls. */
export function toolCalls(calls: ScriptedToolCall[]): GenerateResult {
  return result('', calls.map(makeCall), 'tool-calls');
}

/** A reply that calls the built-in `submit_answer` tool. */
export function submit(answer: string, files: string[] = []): GenerateResult {
  return toolCall('submit_answer', { answer, files });
}

/** A planner reply: each subtask as a title, or as a full `{ title, objective, expectedOutput }`. */
export function planOf(
  ...subtasks: Array<string | { title: string; objective: string; expectedOutput: string }>
): GenerateResult {
  const planned = subtasks.map((subtask) =>
    typeof subtask === 'string'
      ? { title: subtask, objective: subtask, expectedOutput: `The result of: ${subtask}` }
      : subtask,
  );
  return reply(JSON.stringify({ subtasks: planned }));
}

/** A verifier reply; defects as descriptions or as full {@link Defect}s. */
export function verdict(passed: boolean, defects: Array<string | Defect> = []): GenerateResult {
  const list = defects.map((defect) => (typeof defect === 'string' ? { description: defect } : defect));
  return reply(JSON.stringify({ passed, defects: list }));
}
