/**
 * A model call made through `backend.stream()`: the parts become live delta events, the `finish` part the result.
 * @module
 */
import type { GenerateRequest, GenerateResult, LlmBackend, Purpose, StreamPart } from '../backend/types.js';
import { HarnessError } from '../errors.js';
import type { EmitEvent } from '../events.js';

/** Whether the harness calls this backend through `stream()`: it has one and does not opt out with `streaming: false`. */
export function streamsCalls(backend: LlmBackend): backend is LlmBackend & Required<Pick<LlmBackend, 'stream'>> {
  return typeof backend.stream === 'function' && backend.streaming !== false;
}

/** The fields every event of one model call carries. */
export interface CallIdentity {
  runId: string;
  purpose: Purpose;
  scope: string;
  callId: string;
}

/**
 * Streams one call: emits a `text-delta`, `reasoning-delta` or `tool-call-delta` event per part as it arrives and
 * returns the `finish` part's result. A stream that ends without `finish` is an `invalid-response` error, never a
 * silently partial answer.
 */
export async function streamCall(
  backend: LlmBackend & Required<Pick<LlmBackend, 'stream'>>,
  request: GenerateRequest,
  identity: CallIdentity,
  emit: EmitEvent | undefined,
): Promise<GenerateResult> {
  for await (const part of backend.stream(request)) {
    if (part.type === 'finish') return part.result;
    const event = emit ? deltaEvent(part, identity) : undefined;
    if (event) emit?.(event);
  }
  throw new HarnessError(
    'invalid-response',
    `The ${backend.provider} backend's stream() ended without a "finish" part; a stream must end with exactly one.`,
    { retryable: true },
  );
}

/** The event of one part; undefined for a part type this version does not know (it is skipped, not fatal). */
function deltaEvent(part: StreamPart, identity: CallIdentity): Parameters<EmitEvent>[0] | undefined {
  switch (part.type) {
    case 'text-delta':
      return { type: 'text-delta', ...identity, text: part.text };
    case 'reasoning-delta':
      return { type: 'reasoning-delta', ...identity, text: part.text };
    case 'tool-call-delta':
      return {
        type: 'tool-call-delta',
        ...identity,
        toolCallId: part.id,
        ...(part.name === undefined ? {} : { toolName: part.name }),
        argumentsDelta: part.argumentsDelta,
      };
    default:
      return undefined;
  }
}
