/**
 * One round of tool calls of an executor loop: the tool calls of one reply run (in parallel, `submit_answer` last),
 * their results are announced, bounded by the memory layer and turned into the observations that enter the dialogue.
 * @module
 */
import type { ContentPart, Message, ToolCall } from '../backend/types.js';
import type { EventInput } from '../events.js';
import type { ExecutionMemory, MemoryScope } from '../memory/types.js';
import type { DataMark } from '../prompts/datamark.js';
import { SUBMIT_ANSWER_TOOL, wrapToolOutput } from '../prompts/executor.js';
import type { InvokeOptions, ToolRegistry } from '../tools/registry.js';
import type { ToolContext, ToolInvocation } from '../tools/types.js';
import { parseSubmission } from './submission.js';
import type { ExecutorRunInput } from '../contracts/executor.js';

/** What a round uses of its loop. */
export interface ToolRoundHost {
  readonly input: Pick<ExecutorRunInput, 'runId' | 'purpose' | 'scope' | 'workspace'>;
  readonly tools: ToolRegistry;
  readonly toolContext: ToolContext;
  readonly invokeOptions: InvokeOptions;
  readonly memory: ExecutionMemory;
  readonly memoryScope: MemoryScope;
  readonly mark: DataMark;
  emit(event: EventInput): void;
  /** Settles as soon as the loop is stopped, even when the awaited work ignores the signal. */
  untilStopped<T>(work: Promise<T>): Promise<T>;
  /**
   * The loop's journal hooks when it is checkpointed: `starting` is awaited before the calls run (and also when none
   * do, so every reply gets its save), `finished` after each call returns, before its result counts.
   */
  readonly journal?: {
    starting(calls: readonly ToolCall[]): Promise<void>;
    finished(invocation: ToolInvocation): Promise<void>;
  };
}

/** What a round produced. */
export interface ToolRound {
  /** One result per call, in the reply's order. */
  results: ToolInvocation[];
  /** The observations to append to the dialogue, in the same order. */
  observations: Message[];
  /** The answer of the reply's first valid `submit_answer` call. */
  submitted: { answer: string; files: string[] } | undefined;
}

/**
 * Runs the calls of one reply. `answered` holds the results a resumed loop already has for some of them (saved or
 * interrupted): those are not run again and get no new `tool-call` event, but their `tool-result` is emitted now.
 */
export async function runToolRound(
  host: ToolRoundHost,
  calls: readonly ToolCall[],
  answered: ReadonlyMap<string, ToolInvocation> = new Map(),
): Promise<ToolRound> {
  const { runId, purpose, scope, workspace } = host.input;
  const fresh = calls.filter((call) => !answered.has(call.id));
  for (const call of fresh) {
    host.emit({
      type: 'tool-call',
      runId,
      purpose,
      scope,
      callId: call.id,
      toolName: call.name,
      arguments: call.arguments,
    });
  }
  const toRun = calls.flatMap((call, index) =>
    answered.has(call.id) || call.name === SUBMIT_ANSWER_TOOL ? [] : [{ call, index }],
  );
  const journal = host.journal;
  if (journal) await journal.starting(toRun.map(({ call }) => call));
  const invoke = async (call: ToolCall): Promise<ToolInvocation> => {
    const invocation = await host.tools.invoke(call, host.toolContext, host.invokeOptions);
    if (journal) await journal.finished(invocation);
    return invocation;
  };
  // Other tools run first, so an answer submitted alongside them can refer to what they produced.
  const ran = await host.untilStopped(Promise.all(toRun.map(({ call }) => invoke(call))));
  const ranAt = new Map(toRun.map(({ index }, position) => [index, ran[position]]));

  let submitted: ToolRound['submitted'];
  const results = calls.map((call, index): ToolInvocation => {
    const done = call.name === SUBMIT_ANSWER_TOOL ? undefined : (ranAt.get(index) ?? answered.get(call.id));
    if (done) return done;
    const base = { callId: call.id, toolName: call.name, images: [], observation: 'text' as const, durationMs: 0 };
    if (submitted)
      return { ...base, text: 'Ignored: an answer was already submitted in this reply.', files: [], isError: false };
    const submission = parseSubmission(call.arguments, workspace.root);
    if (!submission.ok) return { ...base, text: submission.error, files: [], isError: true };
    submitted = submission.value;
    return { ...base, text: 'Answer submitted.', files: submission.value.files, isError: false };
  });

  const bounded = await host.untilStopped(
    Promise.all(results.map((result) => host.memory.boundObservation(result, host.memoryScope))),
  );
  // Announced once bounded, so the event can show what the model is shown.
  results.forEach((result, index) => {
    host.emit({
      type: 'tool-result',
      runId,
      purpose,
      scope,
      callId: result.callId,
      toolName: result.toolName,
      isError: result.isError,
      durationMs: result.durationMs,
      outputChars: result.text.length,
      output: outputPreview(bounded[index] ?? ''),
      files: result.files,
    });
  });
  const observations = results.map((result, index): Message => {
    const text = wrapToolOutput(host.mark, result.toolName, bounded[index] ?? '', result.isError);
    const content: string | ContentPart[] =
      result.images.length > 0 ? [{ type: 'text', text }, ...result.images] : text;
    return {
      role: 'tool',
      toolCallId: result.callId,
      toolName: result.toolName,
      content,
      ...(result.isError ? { isError: true } : {}),
    };
  });
  return { results, observations, submitted };
}

/** Characters of an observation a `tool-result` event carries: enough to read, small enough for a long run's log. */
const TOOL_OUTPUT_PREVIEW_CHARS = 2_000;

/** The observation as a `tool-result` shows it: its first characters, then how many more there are. */
function outputPreview(observation: string): string {
  const rest = observation.length - TOOL_OUTPUT_PREVIEW_CHARS;
  return rest <= 0 ? observation : `${observation.slice(0, TOOL_OUTPUT_PREVIEW_CHARS)}… ${rest} more chars`;
}
