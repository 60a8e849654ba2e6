/**
 * The OpenTelemetry implementation of `Tracing`, imported only when tracing is on. Spans:
 * - a SERVER span per proxied request (and per report), continuing an incoming `traceparent`;
 * - an INTERNAL span per fired hook (`hookd.fire`), child of the request's span, ended at once:
 *   its `traceparent` is stored with the delivery, so attempts after a restart, or on another
 *   instance of a cluster, stay in the trace;
 * - a CLIENT span per attempt, child of the fire span, whose `traceparent` goes with the callback,
 *   so the receiver's trace continues from the triggering request.
 * Exported with the OTLP/HTTP exporter in batches; the exporter, the sampler and the batching
 * read the standard `OTEL_*` variables.
 */
import type { IncomingMessage } from 'node:http';
import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { parseTraceParent, TraceState } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_RESEND_COUNT,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
} from '@opentelemetry/semantic-conventions';
import type { Logger } from 'pino';
import { packageInfo } from '../util/index.js';
import { otelEnvSettings, type SamplerChoice } from './otel-env.js';
import type { AttemptInfo, AttemptSpan, FiredInfo, RequestSpan, TraceRef, Tracing } from './types.js';

export interface OtelTracingOptions {
  /** The OTLP/HTTP traces URL; absent: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_ENDPOINT` + /v1/traces. */
  endpoint?: string;
  log?: Logger;
  /** Where the `OTEL_*` sampler, batching and limit variables are read (default process.env). */
  env?: NodeJS.ProcessEnv;
}

interface Ref extends TraceRef {
  readonly context: Context;
}

/** `traceparent` of a span context (W3C Trace Context, version 00). */
export function formatTraceParent(sc: SpanContext): string {
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The parent context a stored or received `traceparent` names (root when absent or invalid). */
function remoteContext(traceparent: string | undefined, tracestate?: string): Context {
  if (traceparent === undefined) return ROOT_CONTEXT;
  const sc = parseTraceParent(traceparent.trim());
  if (sc === null) return ROOT_CONTEXT;
  sc.isRemote = true;
  if (tracestate) sc.traceState = new TraceState(tracestate);
  return trace.setSpanContext(ROOT_CONTEXT, sc);
}

export function createOtelTracing(opts: OtelTracingOptions = {}): Tracing {
  const info = packageInfo();
  const resource = resourceFromAttributes({
    [ATTR_SERVICE_NAME]: 'hookd',
    [ATTR_SERVICE_VERSION]: info.version,
  }).merge(detectResources({ detectors: [envDetector] }));
  const exporter = new OTLPTraceExporter(opts.endpoint ? { url: opts.endpoint } : {});
  // SDK 3 reads no sampler, batching or limit variables itself: hookd passes them (otel-env.ts).
  const settings = otelEnvSettings(opts.env ?? process.env);
  for (const w of settings.warnings) opts.log?.warn(w);
  const provider = new TracerProvider({
    resource,
    sampler: samplerOf(settings.sampler),
    spanLimits: settings.spanLimits,
    spanProcessors: [new BatchSpanProcessor({ exporter, ...settings.batch })],
  });
  const tracer: Tracer = provider.getTracer('hookd', info.version);

  return {
    request(req: IncomingMessage, name?: string): RequestSpan {
      // One pass over the raw headers: the proxy never builds `req.headers`.
      let parent: string | undefined;
      let state: string | undefined;
      const raw = req.rawHeaders;
      for (let i = 0; i < raw.length; i += 2) {
        const n = raw[i]!;
        if (n.length === 11 && n.toLowerCase() === 'traceparent') parent = raw[i + 1];
        else if (n.length === 10 && n.toLowerCase() === 'tracestate') state = raw[i + 1];
      }
      const method = req.method ?? 'GET';
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const span = tracer.startSpan(
        name ?? method,
        {
          kind: SpanKind.SERVER,
          attributes: {
            [ATTR_HTTP_REQUEST_METHOD]: method,
            [ATTR_URL_PATH]: q === -1 ? url : url.slice(0, q),
            [ATTR_URL_SCHEME]: 'encrypted' in req.socket && req.socket.encrypted ? 'https' : 'http',
          },
        },
        remoteContext(parent, state),
      );
      const ref: Ref = { traceRef: true, context: trace.setSpan(ROOT_CONTEXT, span) };
      let ended = false;
      return {
        ref,
        traceparent: formatTraceParent(span.spanContext()),
        end(statusCode: number) {
          if (ended) return;
          ended = true;
          span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, statusCode);
          if (statusCode >= 500) {
            span.setStatus({ code: SpanStatusCode.ERROR });
            span.setAttribute(ATTR_ERROR_TYPE, String(statusCode));
          }
          span.end();
        },
      };
    },

    fired(parent: TraceRef | undefined, d: FiredInfo): string {
      const attributes: Attributes = {
        'hookd.hook.id': d.hookId,
        'hookd.hook.type': d.hookType === 0 ? 'BeforeCompletion' : 'AfterCompletion',
        'hookd.delivery.id': d.id,
        'hookd.trigger.method': d.trigger.method,
        'hookd.trigger.path': d.trigger.path,
        'hookd.callback.method': d.request.method,
      };
      if (d.trigger.statusCode !== undefined) attributes['hookd.trigger.status_code'] = d.trigger.statusCode;
      const ctx = parent === undefined ? ROOT_CONTEXT : (parent as Ref).context;
      const span = tracer.startSpan('hookd.fire', { kind: SpanKind.INTERNAL, attributes }, ctx);
      span.end();
      return formatTraceParent(span.spanContext());
    },

    attempt(d: AttemptInfo, attempt: number): AttemptSpan {
      const target = hostOf(d.request.url);
      const span: Span = tracer.startSpan(
        d.request.method,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            [ATTR_HTTP_REQUEST_METHOD]: d.request.method,
            [ATTR_SERVER_ADDRESS]: target.host,
            [ATTR_SERVER_PORT]: target.port,
            [ATTR_URL_SCHEME]: target.scheme,
            'hookd.hook.id': d.hookId,
            'hookd.delivery.id': d.id,
            'hookd.attempt': attempt,
            ...(attempt > 1 && { [ATTR_HTTP_REQUEST_RESEND_COUNT]: attempt - 1 }),
          },
        },
        remoteContext(d.traceParent),
      );
      return {
        traceparent: formatTraceParent(span.spanContext()),
        end(statusCode, error, rateLimitWaitMs) {
          if (statusCode !== null) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, statusCode);
          if (rateLimitWaitMs > 0) span.setAttribute('hookd.rate_limit.wait_ms', rateLimitWaitMs);
          if (statusCode === null || statusCode >= 300) {
            span.setStatus({ code: SpanStatusCode.ERROR, ...(error !== null && { message: error }) });
            span.setAttribute(
              ATTR_ERROR_TYPE,
              statusCode === null ? (error ?? 'no response') : String(statusCode),
            );
          }
          span.end();
        },
      };
    },

    async shutdown(): Promise<void> {
      try {
        await provider.shutdown();
      } catch (err) {
        opts.log?.warn({ err }, 'flushing traces at shutdown failed');
      }
    },
  };
}

function samplerOf(choice: SamplerChoice): Sampler {
  const root =
    choice.root === 'always_on'
      ? new AlwaysOnSampler()
      : choice.root === 'always_off'
        ? new AlwaysOffSampler()
        : new TraceIdRatioBasedSampler(choice.ratio);
  return choice.parentBased ? new ParentBasedSampler({ root }) : root;
}

const hosts = new Map<string, { host: string; port: number; scheme: string }>();

/** Host, port and scheme of a callback URL, parsed once per URL (callback URLs are per hook). */
function hostOf(url: string): { host: string; port: number; scheme: string } {
  let h = hosts.get(url);
  if (h === undefined) {
    const u = new URL(url);
    const scheme = u.protocol.slice(0, -1);
    h = { host: u.hostname, port: Number(u.port) || (scheme === 'https' ? 443 : 80), scheme };
    if (hosts.size >= 10_000) hosts.clear();
    hosts.set(url, h);
  }
  return h;
}
