/**
 * Resending a request without what its server rejected: the loop and the test of a rejection, shared by the adapters.
 * @module
 * @internal
 */
import { HarnessError, type ProviderHttpError } from '../errors.js';

/** Words servers use when a body field is not accepted at all (as opposed to a value out of range). */
const REJECTION = /unsupported|not supported|does not support|not permitted|unrecognized|deprecated|may only be set/i;

/** Whether an error body names the body field `field` (as a word: `max_tokens` is not named by `max_completion_tokens`). @internal */
export function namesField(errorBody: string, field: string): boolean {
  return new RegExp(`\\b${field}\\b`).test(errorBody);
}

/**
 * Whether an HTTP 400 body names the body field `field` and says it is not accepted, e.g. OpenAI's
 * "Unsupported parameter: 'top_p' is not supported with this model." or Anthropic's "`temperature` is deprecated for
 * this model.".
 * @internal
 */
export function rejectsField(errorBody: string, field: string): boolean {
  return REJECTION.test(errorBody) && namesField(errorBody, field);
}

/**
 * Builds a body and sends it; when the server answers HTTP 400, `adapt` reads the error text and the body that was
 * sent, remembers what the server does not accept, and returns true when the next built body leaves that out: the
 * request is then sent again. `adapt` must return true only when the next body differs, so that this ends.
 * @internal
 */
export async function withAdaptation<T>(
  buildBody: () => Record<string, unknown>,
  send: (body: Record<string, unknown>) => Promise<T>,
  adapt: (errorBody: string, sent: Record<string, unknown>) => boolean,
): Promise<T> {
  for (;;) {
    const body = buildBody();
    try {
      return await send(body);
    } catch (error) {
      const { status, body: errorBody } = error as Partial<ProviderHttpError>;
      if (!HarnessError.isInstance(error) || status !== 400 || errorBody === undefined || !adapt(errorBody, body))
        throw error;
    }
  }
}
