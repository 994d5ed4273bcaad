/**
 * The pipeline's optional last stage: the typed result `run({ output })` asks for, read from the deliverable.
 * @module
 */
import type { OutputRequest } from '../../schema/schema-adapter.js';
import { typedResult, type TypedResult } from '../shared/typed-result.js';
import type { StageContext } from './stage-context.js';

/**
 * Asks for the typed result of `request` when one was asked for and the deliverable did not fail verification (a
 * deliverable with defects left is not read into a typed value); undefined when it is not asked for.
 * @internal
 */
export async function outputStage(
  run: StageContext,
  request: OutputRequest | undefined,
): Promise<TypedResult | undefined> {
  if (!request) return undefined;
  if (run.s.verdicts.at(-1)?.status === 'failed') return undefined;
  run.control.check('output');
  return run.control.guard('output', () =>
    typedResult({
      request,
      call: run.roles.typedOutputCall(),
      runId: run.runId,
      task: run.task,
      deliverable: run.s.deliverable,
      mark: run.mark,
      emit: run.emit,
    }),
  );
}
