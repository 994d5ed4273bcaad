/**
 * `instrument(harness)`: the harness's events as OpenTelemetry spans, one trace per run.
 * @module
 */
import type { Context, Tracer } from '@opentelemetry/api';
import { z } from 'zod';
import { LIBRARY_VERSION } from '../durability/version.js';
import { HarnessError } from '../errors.js';
import { HARNESS_EVENT_TYPES, isDeltaEvent, type HarnessEvent, type HarnessEventType } from '../events.js';
import type { Harness } from '../harness/harness.js';
import { describeIssues } from '../util/did-you-mean.js';
import { loadPeer } from '../util/load-peer.js';
import { SecretRedactor } from '../util/secrets.js';
import { ContentRecorder } from './content.js';
import { RunTrace, type RunTraceSettings } from './run-trace.js';
import { SpanTree, type OtelApi } from './span-tree.js';
import { docsUrl } from '../project-links.js';

/** The name the default tracer and the run spans carry. */
export const INSTRUMENTATION_NAME = 'horizon-harness';

const InstrumentOptionsSchema = z.strictObject({
  tracer: z
    .custom<Tracer>(
      (value) => typeof (value as Tracer | null)?.startSpan === 'function',
      'must be an OpenTelemetry Tracer (an object with startSpan())',
    )
    .optional(),
  captureContent: z.boolean().default(false),
  secrets: z.array(z.string()).default([]),
  agentName: z.string().min(1).default(INSTRUMENTATION_NAME),
});

/** Options of {@link instrument}. */
export interface InstrumentOptions {
  /**
   * The tracer the spans go to.
   * @defaultValue `trace.getTracer('horizon-harness', <version>)` of `@opentelemetry/api`: the global tracer provider's
   */
  tracer?: Tracer;
  /**
   * Records prompts, replies and tool arguments on the spans (`gen_ai.input.messages`, `gen_ai.output.messages`,
   * `gen_ai.tool.call.arguments`), as the GenAI conventions allow on opt-in. They are large and often sensitive.
   * @defaultValue false
   */
  captureContent?: boolean;
  /**
   * Strings to redact from every span (also any 12-character piece of one of 16 characters or more), besides what is
   * always redacted: the secrets the harness knows (its backends' credentials, the `passEnv` values of its shell and
   * Python tools), the values of secret-named environment variables (`*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASS*`,
   * `*PWD*`, `*DSN*`, `*_PAT`, …) and secret-shaped text (credentials in URLs, tokens with a known prefix).
   * @defaultValue []
   */
  secrets?: string[];
  /**
   * `gen_ai.agent.name` of the run spans, and the second word of their name (`invoke_agent <agentName>`).
   * @defaultValue 'horizon-harness'
   */
  agentName?: string;
}

/** What {@link instrument} needs of a harness: its events, and content when it is captured. */
export type InstrumentableHarness = Pick<Harness, 'on' | 'captureContent'>;

/**
 * Turns the events of every run of `harness` into OpenTelemetry spans following the GenAI semantic conventions:
 * `invoke_agent` per run, a span per stage and subtask (per round in managed mode), `chat {model}` per model call and
 * `execute_tool {tool}` per tool call. Runs started after it resolves are traced; it is async because it loads the
 * optional peer `@opentelemetry/api` (a missing one rejects with `missing-peer-dependency`). Resolves with a function
 * that stops tracing and ends the spans of runs still in flight.
 *
 * @example
 * ```ts
 * import { instrument } from 'horizon-harness/otel';
 * const stop = await instrument(harness, { captureContent: false });
 * await harness.run('Compare three laptops; write compare.md');
 * stop();
 * ```
 */
export async function instrument(harness: InstrumentableHarness, options: InstrumentOptions = {}): Promise<() => void> {
  const parsed = InstrumentOptionsSchema.safeParse(options);
  if (!parsed.success) {
    const problems = describeIssues(parsed.error.issues, { schema: InstrumentOptionsSchema });
    throw new HarnessError(
      'invalid-options',
      `Invalid instrument options: ${problems.join('; ')}. See ${docsUrl('observability.md')}.`,
    );
  }
  const o = parsed.data;
  const api: OtelApi = await loadPeer('@opentelemetry/api', 'otel', () => import('@opentelemetry/api'));
  const tracer = o.tracer ?? api.trace.getTracer(INSTRUMENTATION_NAME, LIBRARY_VERSION);
  const settings: RunTraceSettings = {
    tree: new SpanTree(api, tracer),
    content: o.captureContent ? new ContentRecorder() : undefined,
    agentName: o.agentName,
  };
  const runs = new RunTraces(settings, () => api.context.active());
  // Every event is redacted here too: the harness knows its backends' and tools' secrets, this adds the host's.
  const redactor = new SecretRedactor({ secrets: o.secrets });
  const removers = TRACED_EVENT_TYPES.map((type) =>
    harness.on(type, (event) => runs.handle(redactor.data(event as HarnessEvent))),
  );
  const releaseContent = o.captureContent ? harness.captureContent() : undefined;
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    for (const remove of removers) remove();
    releaseContent?.();
    runs.abandonAll();
  };
}

/** Every event type but the streaming deltas: listening to those would make every run build them. */
const TRACED_EVENT_TYPES: readonly HarnessEventType[] = HARNESS_EVENT_TYPES.filter((type) => !isDeltaEvent({ type }));

/** The traces of the runs in flight, by run id, so that concurrent runs never share a span. */
class RunTraces {
  private readonly traces = new Map<string, RunTrace>();

  constructor(
    private readonly settings: RunTraceSettings,
    private readonly activeContext: () => Context,
  ) {}

  handle(event: HarnessEvent): void {
    const trace = this.traces.get(event.runId);
    if (trace) {
      if (trace.handle(event)) this.traces.delete(event.runId);
      return;
    }
    // A run is traced from its start (or its resume); events of a run that began before instrumenting are skipped.
    if (event.type !== 'run-start' && event.type !== 'run-resume') return;
    // Listeners run inside the harness's call chain: the run span joins the trace active where the run started.
    this.traces.set(event.runId, new RunTrace(this.settings, event, this.activeContext()));
  }

  abandonAll(): void {
    for (const trace of this.traces.values()) trace.abandon();
    this.traces.clear();
  }
}
