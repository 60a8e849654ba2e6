/**
 * OpenTelemetry tracing of hookd: off by default; on with the standard `OTEL_*` variables (an
 * OTLP endpoint set) or the `tracing.enabled` option. While it is off nothing of the SDK is
 * loaded and the proxy path pays one `undefined` check (docs/DECISIONS.md "OpenTelemetry").
 */
import type { Logger } from 'pino';
import type { HookdConfig } from '../config/index.js';
import type { Tracing } from './types.js';

export type { AttemptSpan, RequestSpan, TraceRef, Tracing } from './types.js';

const TRUE = new Set(['true', '1', 'yes', 'on']);

/** Why tracing is on or off for this configuration and environment (false: off). */
export function tracingWanted(
  config: Pick<HookdConfig, 'tracing' | 'tracingEndpoint'>,
  env: NodeJS.ProcessEnv,
): boolean {
  // The SDK's own switch wins over everything (OpenTelemetry SDK environment variables).
  if (TRUE.has((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase())) return false;
  if (config.tracing !== undefined) return config.tracing;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((s) => s.trim().toLowerCase());
  if (exporters.includes('none')) return false;
  return Boolean(
    config.tracingEndpoint || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT,
  );
}

/** Starts tracing when it is wanted (loading the SDK then, and only then); undefined when off. */
export async function startTracing(
  config: Pick<HookdConfig, 'tracing' | 'tracingEndpoint'>,
  env: NodeJS.ProcessEnv,
  log: Logger,
): Promise<Tracing | undefined> {
  if (!tracingWanted(config, env)) return undefined;
  const { createOtelTracing } = await import('./otel-tracing.js');
  const tracing = createOtelTracing({
    ...(config.tracingEndpoint && { endpoint: config.tracingEndpoint }),
    log,
  });
  log.info(
    {
      endpoint:
        config.tracingEndpoint ??
        env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
        env.OTEL_EXPORTER_OTLP_ENDPOINT ??
        'http://localhost:4318/v1/traces',
      sampler: env.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on',
    },
    'tracing on (OpenTelemetry, OTLP/HTTP)',
  );
  return tracing;
}
