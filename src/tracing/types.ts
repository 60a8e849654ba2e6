/**
 * What the proxy, the report route and the delivery pipeline see of tracing: small interfaces
 * with no OpenTelemetry import, so that nothing of the SDK is loaded while tracing is off
 * (otel-tracing.ts implements them and is imported only when it is on).
 */
import type { IncomingMessage } from 'node:http';

/** The span of a triggering request, as the engine carries it to fired callbacks (opaque). */
export interface TraceRef {
  readonly traceRef: true;
}

/** The server span of one request (proxied, or a report). */
export interface RequestSpan {
  /** The parent of the fire spans of the hooks this request fires. */
  readonly ref: TraceRef;
  /** `traceparent` naming this span, for the request forwarded to the upstream. */
  readonly traceparent: string;
  /** Ends the span with the response status (hookd's own 502/504 included). */
  end(statusCode: number): void;
}

/** What the fire span of a callback is told. */
export interface FiredInfo {
  id: string;
  hookId: string;
  hookType: 0 | 1;
  trigger: { method: string; path: string; statusCode?: number };
  request: { method: string; url: string };
}

export interface AttemptInfo {
  id: string;
  hookId: string;
  /** The fire span's `traceparent` (stored with the delivery), the attempt span's parent. */
  traceParent?: string;
  request: { method: string; url: string };
}

/** The span of one callback attempt. */
export interface AttemptSpan {
  /** `traceparent` naming this span: sent with the callback. */
  readonly traceparent: string;
  end(statusCode: number | null, error: string | null, rateLimitWaitMs: number): void;
}

/** Tracing as the daemon's parts use it; undefined everywhere while it is off. */
export interface Tracing {
  /** Starts the server span of a request, continuing its `traceparent` if it has one. */
  request(req: IncomingMessage, name?: string): RequestSpan;
  /** Records the fire span of a delivery (child of the triggering request); returns its `traceparent`. */
  fired(parent: TraceRef | undefined, d: FiredInfo): string;
  /** Starts the span of an attempt: `attempt` is 1-based over the delivery's life. */
  attempt(d: AttemptInfo, attempt: number): AttemptSpan;
  /** Sends what is buffered and stops. */
  shutdown(): Promise<void>;
}
