/**
 * A run's own view of a backend: the prices its calls are charged at and the gate that admits each call before it is
 * sent (`limits.maxCost`). Every model call of a run is made with a backend the run's wiring hands out, so the view
 * reaches every call without each component that builds a call having to carry the run's cost state.
 * @module
 * @internal
 */
import type { BackendPricing, LlmBackend, Purpose } from '../backend/types.js';

/** A model call about to be sent, as a {@link CallGate} sees it. */
export interface PlannedCall {
  purpose: Purpose;
  scope: string;
  /** The backend it goes to (the run's view of it, with the prices of the call's role). */
  backend: LlmBackend;
  /** The request's input tokens, as counted for its `llm-request` event. */
  requestTokens: number;
  /** Output tokens reserved for the answer and sent as its limit; `undefined` when the request sends none. */
  maxOutputTokens: number | undefined;
}

/** Admits or refuses model calls before they are sent. */
export interface CallGate {
  /**
   * Throws to refuse the call: it is then neither sent nor announced with `llm-request`. Otherwise returns the
   * function `callModel` calls once the call has ended (answered or failed).
   */
  admit(call: PlannedCall): () => void;
}

// Symbol.for: the CJS build copies modules into each entry, and a view made by one copy must be seen by another.
const GATE = Symbol.for('horizon-harness.call-gate');

type GatedBackend = LlmBackend & { readonly [GATE]?: CallGate };

/**
 * The run's view of `backend`: the same model (every call goes to `backend`, its properties read from it), charged at
 * `pricing` and admitted by `gate`.
 */
export function runBackendView(
  backend: LlmBackend,
  settings: { pricing: BackendPricing | undefined; gate: CallGate | undefined },
): LlmBackend {
  const stream = backend.stream?.bind(backend);
  const view: GatedBackend = {
    get provider() {
      return backend.provider;
    },
    get modelId() {
      return backend.modelId;
    },
    get contextWindow() {
      return backend.contextWindow;
    },
    get supportsImages() {
      return backend.supportsImages;
    },
    get streaming() {
      return backend.streaming;
    },
    get promptCache() {
      return backend.promptCache;
    },
    ...(settings.pricing ? { pricing: settings.pricing } : {}),
    generate: (request) => backend.generate(request),
    ...(stream ? { stream } : {}),
    ...(settings.gate ? { [GATE]: settings.gate } : {}),
  };
  return view;
}

/** The gate of a run's backend view; `undefined` for any other backend. */
export function callGateOf(backend: LlmBackend): CallGate | undefined {
  return (backend as GatedBackend)[GATE];
}
