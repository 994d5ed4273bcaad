/**
 * The open spans of one run as a tree, so that ending a span ends what is still open under it: a run that stops
 * (abort, timeout, failure) never leaves a span open.
 * @module
 * @internal
 */
import type { Attributes, Context, Span, Tracer } from '@opentelemetry/api';
import { ERROR_TYPES, GEN_AI } from './attributes.js';

/** The parts of `@opentelemetry/api` the tracing uses at run time (loaded as an optional peer). @internal */
export type OtelApi = Pick<typeof import('@opentelemetry/api'), 'trace' | 'context' | 'SpanKind' | 'SpanStatusCode'>;

/** Why a span ended badly: `error.type` and the status message. @internal */
export interface SpanError {
  type: string;
  message: string;
}

/**
 * An open span. `call` spans (a model call, a tool call) that end because their parent ended never reported their
 * end, so they end as errors; `scope` spans (run, stage, subtask) take the error their parent gives them, if any.
 * @internal
 */
export interface SpanNode {
  readonly span: Span;
  readonly context: Context;
  readonly start: number;
  readonly kind: 'scope' | 'call';
  readonly children: Set<SpanNode>;
  readonly parent: SpanNode | undefined;
  ended: boolean;
  /** Set by {@link SpanTree.fail}: a span records one failure, the first. */
  failed: boolean;
}

/** What a new span is. @internal */
export interface SpanSpec {
  name: string;
  kind: 'scope' | 'call';
  /** The span kind of the conventions: model calls are `client`, the rest `internal`. */
  spanKind?: 'client' | 'internal';
  start: number;
  attributes: Attributes;
}

/** Starts and ends the spans of one run. @internal */
export class SpanTree {
  constructor(
    private readonly api: OtelApi,
    private readonly tracer: Tracer,
  ) {}

  /** Starts a span under `parent`, or under `root` (the context the run started in) for the run span itself. */
  open(spec: SpanSpec, parent: SpanNode | Context): SpanNode {
    const parentNode = isNode(parent) ? parent : undefined;
    const parentContext = isNode(parent) ? parent.context : parent;
    const span = this.tracer.startSpan(
      spec.name,
      {
        kind: spec.spanKind === 'client' ? this.api.SpanKind.CLIENT : this.api.SpanKind.INTERNAL,
        startTime: spec.start,
        attributes: spec.attributes,
      },
      parentContext,
    );
    const node: SpanNode = {
      span,
      context: this.api.trace.setSpan(parentContext, span),
      start: spec.start,
      kind: spec.kind,
      children: new Set(),
      parent: parentNode,
      ended: false,
      failed: false,
    };
    parentNode?.children.add(node);
    return node;
  }

  /**
   * Marks a span failed: `error.type`, status ERROR with the message, and the error as an exception event. Only the
   * first failure of a span counts: it is the cause, later ones are its consequences.
   */
  fail(node: SpanNode, error: SpanError, at: number): void {
    if (node.failed || node.ended) return;
    node.failed = true;
    node.span.setAttribute(GEN_AI.errorType, error.type);
    node.span.recordException({ name: error.type, message: error.message }, clamp(node, at));
    node.span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: error.message });
  }

  /**
   * Ends a span at `at` (never before it started), first ending what is still open under it: open calls as errors
   * (`orphanError`, or `_OTHER`), open scopes with `orphanError` when one is given.
   */
  end(node: SpanNode, at: number, orphanError?: SpanError): void {
    if (node.ended) return;
    for (const child of [...node.children]) {
      if (child.ended) continue;
      const error =
        child.kind === 'call'
          ? (orphanError ?? { type: ERROR_TYPES.other, message: 'It did not report its end.' })
          : orphanError;
      if (error) this.fail(child, error, at);
      this.end(child, at, orphanError);
    }
    node.ended = true;
    node.parent?.children.delete(node);
    node.span.end(clamp(node, at));
  }
}

function isNode(value: SpanNode | Context): value is SpanNode {
  return typeof (value as SpanNode).span === 'object' && (value as SpanNode).children instanceof Set;
}

function clamp(node: SpanNode, at: number): number {
  return Math.max(at, node.start);
}
