import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/** A tracer whose spans stay in memory once ended. */
export function inMemoryTracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { tracer: provider.getTracer('test'), spans: () => exporter.getFinishedSpans() };
}

/** A clock that moves one millisecond per reading, so that every event has its own time and spans sort by start. */
export function tickingClock(start = Date.now()): () => number {
  let now = start;
  return () => now++;
}

/** The span tree as indented names, children in start order. */
export function renderTree(spans: readonly ReadableSpan[]): string {
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  const children = new Map<string, ReadableSpan[]>();
  for (const span of spans) {
    const parent = span.parentSpanContext?.spanId;
    const key = parent && ids.has(parent) ? parent : 'root';
    children.set(key, [...(children.get(key) ?? []), span]);
  }
  const lines: string[] = [];
  const walk = (key: string, depth: number) => {
    const list = [...(children.get(key) ?? [])].sort((a, b) => hrMs(a.startTime) - hrMs(b.startTime));
    for (const span of list) {
      lines.push(`${'  '.repeat(depth)}${span.name}`);
      walk(span.spanContext().spanId, depth + 1);
    }
  };
  walk('root', 0);
  return lines.join('\n');
}

/** The span named `name` (the only one, or the `index`-th in start order). */
export function spanNamed(spans: readonly ReadableSpan[], name: string, index = 0): ReadableSpan {
  const found = spans.filter((s) => s.name === name).sort((a, b) => hrMs(a.startTime) - hrMs(b.startTime))[index];
  if (!found) throw new Error(`No span "${name}" #${index}; spans: ${spans.map((s) => s.name).join(', ')}`);
  return found;
}

/** The parent of a span among `spans`. */
export function parentOf(spans: readonly ReadableSpan[], span: ReadableSpan): ReadableSpan | undefined {
  return spans.find((s) => s.spanContext().spanId === span.parentSpanContext?.spanId);
}

/** Every attribute value of every span and span event, as text: where leaked content would show. */
export function everyRecordedText(spans: readonly ReadableSpan[]): string {
  return spans
    .flatMap((s) => [
      s.name,
      s.status.message ?? '',
      ...Object.values(s.attributes).map(String),
      ...s.events.flatMap((e) => [e.name, ...Object.values(e.attributes ?? {}).map(String)]),
    ])
    .join('\n');
}

function hrMs([seconds, nanos]: [number, number]): number {
  return seconds * 1e3 + nanos / 1e6;
}
