/**
 * The typed result of `run({ output })`, in either mode: asked for once the run ran to its end with a deliverable
 * that did not fail verification, and reported honestly when it cannot be had.
 * @module
 */
import type { Deliverable, RunResult } from '../../contracts/work.js';
import type { EmitEvent } from '../../events.js';
import type { OutputRequest } from '../../schema/schema-adapter.js';
import type { ModelCallContext } from '../../llm/call-model.js';
import type { DataMark } from '../../prompts/datamark.js';
import { askTypedOutput } from '../../synthesizer/typed-output.js';

/** The `output` / `outputError` fields of a result. @internal */
export type TypedResult = Pick<RunResult, 'output' | 'outputError'>;

/** What a mode hands over to get its typed result. @internal */
export interface TypedResultInput {
  request: OutputRequest;
  call: ModelCallContext;
  runId: string;
  task: string;
  deliverable: Deliverable;
  mark: DataMark;
  emit: EmitEvent;
}

/**
 * Asks for the typed result (see {@link askTypedOutput}); a value that still fails the schema after the re-ask gives
 * no `output`, an `outputError` and a `run-warning` (`output-invalid`). Backend errors propagate to the mode, which
 * stops the run as for any stage.
 */
export async function typedResult(input: TypedResultInput): Promise<TypedResult> {
  const outcome = await askTypedOutput(input.call, {
    schema: input.request.schema,
    jsonSchema: input.request.jsonSchema,
    task: input.task,
    deliverable: input.deliverable,
    mark: input.mark,
  });
  if (outcome.ok) return { output: outcome.value };
  const message = `The typed result failed its schema after ${outcome.calls} ask(s), so the run has no output: ${outcome.error}`;
  input.emit({
    type: 'run-warning',
    runId: input.runId,
    code: 'output-invalid',
    message,
    purpose: 'synthesize',
    scope: input.call.scope,
  });
  return { outputError: message };
}

/** Why no typed result was asked for: the run did not end with a deliverable that passed (or skipped) verification. */
export function typedResultSkipped(status: RunResult['status']): TypedResult {
  return {
    outputError: `The run ended with status "${status}", so no typed result was asked for: only a finished deliverable that did not fail verification is turned into one.`,
  };
}
