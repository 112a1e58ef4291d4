import { context, createContextKey, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Link, type Span, type SpanContext } from '@opentelemetry/api';
import type { FastifyPluginCallback, FastifyRequest } from 'fastify';
import { withoutSecrets } from './url-redaction.js';

const TRACER_NAME = 'shop-accounts';
const DEFAULT_SERVICE_NAME = 'shop-accounts';

/**
 * Tracing (API.md section 15): OpenTelemetry with the standard OTEL_* variables, through the
 * NodeSDK (exporter, protocol, sampler from the environment) and @fastify/otel for the server
 * spans. Unset, nothing of it is loaded and every helper below runs its work as it is.
 */
export interface Tracing {
  /** @fastify/otel: one server span a request, named by method and route pattern. */
  plugin: FastifyPluginCallback;
  /** Sends what the span processor holds now (tests; a clean shutdown does it too). */
  flush(): Promise<void>;
  /** Sends what is buffered and stops. */
  shutdown(): Promise<void>;
}

let enabled = false;

/** Whether the environment asks for traces (an OTLP endpoint), as API.md section 15 says. */
export function tracingRequested(environment: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(environment.OTEL_EXPORTER_OTLP_ENDPOINT || environment.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) && environment.OTEL_SDK_DISABLED !== 'true';
}

/** `/api/variants/:id` as OpenAPI writes it: `/api/variants/{id}`. */
const routePattern = (url: string | undefined) => (url ?? '').replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/**
 * A server span's `url.path` and `url.query` (API.md section 17): the query as the log writes it,
 * its secret-looking values redacted. @fastify/otel sets `url.path` to the whole URL, query and all.
 */
function urlAttributes(url: string): Attributes {
  const redacted = withoutSecrets(url);
  const queryStart = redacted.indexOf('?');
  if (queryStart === -1) return { 'url.path': redacted };
  return { 'url.path': redacted.slice(0, queryStart), 'url.query': redacted.slice(queryStart + 1) };
}

/** Starts the SDK when the environment asks for it (once a process); undefined otherwise. */
export async function startTracing(environment: NodeJS.ProcessEnv = process.env): Promise<Tracing | undefined> {
  if (!tracingRequested(environment)) return undefined;
  const [{ NodeSDK }, { FastifyOtelInstrumentation }] = await Promise.all([import('@opentelemetry/sdk-node'), import('@fastify/otel')]);
  const instrumentation = new FastifyOtelInstrumentation({
    // One span a request: no span per lifecycle hook or for the handler.
    instrumentHooks: false,
    instrumentHandler: false,
    requestHook: (span: Span, request: FastifyRequest) => {
      span.updateName(`${request.method} ${routePattern(request.routeOptions.url)}`);
      span.setAttributes(urlAttributes(request.url));
    },
  });
  const sdk = new NodeSDK({
    ...(environment.OTEL_SERVICE_NAME ? {} : { serviceName: DEFAULT_SERVICE_NAME }),
    instrumentations: [instrumentation],
    // Traces only: left unset, the SDK would also start OTLP metrics and logs pipelines.
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  enabled = true;
  const provider = () => (trace.getTracerProvider() as unknown as { getDelegate(): { forceFlush?(): Promise<void> } }).getDelegate();
  return {
    plugin: instrumentation.plugin(),
    flush: async () => {
      await provider().forceFlush?.();
    },
    shutdown: async () => {
      enabled = false;
      await sdk.shutdown();
    },
  };
}

/**
 * Runs `work` in a span of its own (a statement, an SMTP send, a webhook POST, a job run), a child
 * of the active one; with tracing off, runs it as it is. A thrown error marks the span.
 */
export function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; links?: Link[]; root?: boolean },
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!enabled) return work(undefined);
  const settings = { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, links: options.links, root: options.root };
  return trace.getTracer(TRACER_NAME).startActiveSpan(name, settings, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      markFailed(span, error as Error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** A statement run before its background run was known to have work: recorded only if it has. */
interface HeldSpan {
  name: string;
  kind: SpanKind;
  attributes: Attributes | undefined;
  startTime: number;
  endTime: number;
  error?: Error;
}

/** Statements a background run holds before it is known to have work; a run of hundreds keeps the first ones. */
const MOST_HELD_SPANS = 100;
/** Now, in milliseconds since the epoch with a fraction (a span's start or end after the fact). */
const now = () => performance.timeOrigin + performance.now();

/**
 * A background job's run (API.md section 17): it records a span only once it finds something to
 * do, from the run's start and with the statements it ran until then as its children; after
 * that its statements are recorded as they run. A run that finds nothing records nothing.
 */
class BackgroundRun {
  readonly startTime = now();
  readonly held: HeldSpan[] = [];
  span: Span | undefined;
  notHeld = 0;

  constructor(readonly name: string) {}

  /** A statement that ended: held while the run has no span, else recorded under it at once. */
  hold(held: HeldSpan): void {
    if (this.span) this.record(this.span, held);
    else if (this.held.length < MOST_HELD_SPANS) this.held.push(held);
    else this.notHeld++;
  }

  /** The run has work: its span, begun at the run's start, and the statements held till now under it. */
  found(): Span {
    if (this.span) return this.span;
    const span = trace.getTracer(TRACER_NAME).startSpan(this.name, { root: true, startTime: this.startTime }, ROOT_CONTEXT);
    if (this.notHeld > 0) span.setAttribute('job.statements_not_recorded', this.notHeld);
    for (const held of this.held.splice(0)) this.record(span, held);
    this.span = span;
    return span;
  }

  private record(parent: Span, held: HeldSpan): void {
    const child = trace.getTracer(TRACER_NAME).startSpan(held.name, { kind: held.kind, attributes: held.attributes, startTime: held.startTime }, trace.setSpan(ROOT_CONTEXT, parent));
    if (held.error) markFailed(child, held.error);
    child.end(held.endTime);
  }
}

const BACKGROUND_RUN = createContextKey('shop-accounts background run');

function markFailed(span: Span, error: Error): void {
  span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
}

/**
 * Runs `work` as a background job's run named `name` (tracing on), outside whatever trace is
 * active: its span is recorded only if the run finds work, that is if one of its statements
 * changes a row (see `inStatementSpan`) or the run fails. A run started within another joins it.
 */
export function inBackgroundRun<T>(name: string, work: () => Promise<T>): Promise<T> {
  if (!enabled || context.active().getValue(BACKGROUND_RUN)) return work();
  const run = new BackgroundRun(name);
  return context.with(ROOT_CONTEXT.setValue(BACKGROUND_RUN, run), async () => {
    try {
      return await work();
    } catch (error) {
      markFailed(run.found(), error as Error);
      throw error;
    } finally {
      run.span?.end();
    }
  });
}

/**
 * Runs `work`, a database statement, in a span (tracing on) under the active span. With no active
 * span, inside a background run the statement is held until the run shows it has work (`changed`
 * tells whether this statement's result is some), and anywhere else (a pool's own statements)
 * it is not recorded: no span without a parent.
 */
export async function inStatementSpan<T>(name: string, options: { attributes?: Attributes }, work: () => Promise<T>, changed: (result: T) => boolean): Promise<T> {
  if (!enabled) return work();
  const settings = { kind: SpanKind.CLIENT, attributes: options.attributes };
  if (trace.getSpan(context.active())) return inSpan(name, settings, work);
  const run = context.active().getValue(BACKGROUND_RUN) as BackgroundRun | undefined;
  if (!run) return work();
  if (run.span) return context.with(trace.setSpan(context.active(), run.span), () => inSpan(name, settings, work));
  const startTime = now();
  let result: T;
  try {
    result = await work();
  } catch (error) {
    run.hold({ name, ...settings, startTime, endTime: now(), error: error as Error });
    throw error;
  }
  run.hold({ name, ...settings, startTime, endTime: now() });
  if (changed(result)) run.found();
  return result;
}

/**
 * Runs `work` outside whatever trace is active: background work a request wakes (a queue's next
 * pass) must not become part of that request's trace.
 */
export function outsideAnyTrace<T>(work: () => T): T {
  return enabled ? context.with(ROOT_CONTEXT, work) : work();
}

/** The W3C `traceparent` of a span context. */
export const traceparentOf = (spanContext: SpanContext) => `00-${spanContext.traceId}-${spanContext.spanId}-${(spanContext.traceFlags & 1).toString(16).padStart(2, '0')}`;

/** The `traceparent` of the active span (what an event keeps of the request that recorded it); null with tracing off. */
export function activeTraceparent(): string | null {
  if (!enabled) return null;
  const span = trace.getSpan(context.active());
  const spanContext = span?.spanContext();
  return spanContext && trace.isSpanContextValid(spanContext) ? traceparentOf(spanContext) : null;
}

/** A link to the span a stored `traceparent` names (a webhook delivery to the trace of its event). */
export function linkTo(traceparent: string | null): Link[] {
  const match = traceparent ? /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(traceparent) : null;
  if (!match) return [];
  return [{ context: { traceId: match[1]!, spanId: match[2]!, traceFlags: Number.parseInt(match[3]!, 16), isRemote: true } }];
}

/** `trace_id` and `span_id` for a log line written inside a span (pino's mixin). */
export function traceFields(): Record<string, string> {
  if (!enabled) return {};
  const spanContext = trace.getSpan(context.active())?.spanContext();
  return spanContext && trace.isSpanContextValid(spanContext) ? { trace_id: spanContext.traceId, span_id: spanContext.spanId } : {};
}

export { SpanKind, SpanStatusCode };
