/**
 * `horizon-harness/otel`: OpenTelemetry tracing of runs, following the GenAI semantic conventions. Needs the optional
 * peer dependency `@opentelemetry/api`. See docs/observability.md.
 * @packageDocumentation
 */
export { instrument, INSTRUMENTATION_NAME, type InstrumentableHarness, type InstrumentOptions } from './instrument.js';
export { ERROR_TYPES, GEN_AI_SEMCONV_VERSION } from './attributes.js';
