/**
 * The OpenTelemetry SDK variables that SDK 3 does not read itself (it takes code options only):
 * the sampler (`OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`), the batch span processor
 * (`OTEL_BSP_*`) and the span limits (`OTEL_SPAN_*`, `OTEL_ATTRIBUTE_*`, `OTEL_EVENT_*`,
 * `OTEL_LINK_*`). The README promises hookd honours them, so hookd reads them here, with the
 * specification's defaults and its rule for bad values: ignored (the default stands), with a
 * warning. The exporter (`OTEL_EXPORTER_OTLP_*`) and the resource (`OTEL_SERVICE_NAME`,
 * `OTEL_RESOURCE_ATTRIBUTES`) are still read by the SDK.
 */

/** How spans are sampled, as named by `OTEL_TRACES_SAMPLER`. */
export interface SamplerChoice {
  /** Whether the parent's decision wins when there is a parent. */
  parentBased: boolean;
  /** The root decision: always, never, or by trace-id ratio. */
  root: 'always_on' | 'always_off' | 'traceidratio';
  /** The ratio of `traceidratio` (0..1). */
  ratio: number;
}

export interface BatchSettings {
  scheduledDelayMillis: number;
  exportTimeoutMillis: number;
  maxQueueSize: number;
  maxExportBatchSize: number;
}

export interface SpanLimitSettings {
  attributeValueLengthLimit?: number;
  attributeCountLimit?: number;
  eventCountLimit?: number;
  linkCountLimit?: number;
  attributePerEventCountLimit?: number;
  attributePerLinkCountLimit?: number;
}

export interface OtelEnvSettings {
  sampler: SamplerChoice;
  batch: BatchSettings;
  spanLimits: SpanLimitSettings;
  /** One line per variable whose value was ignored (the default applies). */
  warnings: string[];
}

const SAMPLERS: Record<string, Omit<SamplerChoice, 'ratio'>> = {
  always_on: { parentBased: false, root: 'always_on' },
  always_off: { parentBased: false, root: 'always_off' },
  traceidratio: { parentBased: false, root: 'traceidratio' },
  parentbased_always_on: { parentBased: true, root: 'always_on' },
  parentbased_always_off: { parentBased: true, root: 'always_off' },
  parentbased_traceidratio: { parentBased: true, root: 'traceidratio' },
};

/** Reads the variables; never throws (a bad value is a warning and the default). */
export function otelEnvSettings(env: NodeJS.ProcessEnv): OtelEnvSettings {
  const warnings: string[] = [];
  const text = (name: string): string | undefined => {
    const v = env[name]?.trim();
    return v === undefined || v === '' ? undefined : v;
  };
  /** A non-negative integer, or undefined (absent or bad: warned). */
  const count = (name: string): number | undefined => {
    const v = text(name);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (Number.isSafeInteger(n) && n >= 0) return n;
    warnings.push(`${name}=${v} is not a non-negative integer; the default applies`);
    return undefined;
  };
  const positive = (name: string, fallback: number): number => {
    const n = count(name);
    if (n === 0) {
      warnings.push(`${name}=0 must be positive; the default applies`);
      return fallback;
    }
    return n ?? fallback;
  };

  const samplerName = text('OTEL_TRACES_SAMPLER')?.toLowerCase() ?? 'parentbased_always_on';
  let base = SAMPLERS[samplerName];
  if (base === undefined) {
    warnings.push(`OTEL_TRACES_SAMPLER=${samplerName} is not a known sampler; parentbased_always_on applies`);
    base = { parentBased: true, root: 'always_on' };
  }
  let ratio = 1;
  const arg = text('OTEL_TRACES_SAMPLER_ARG');
  if (arg !== undefined && base.root === 'traceidratio') {
    const r = Number(arg);
    if (Number.isFinite(r) && r >= 0 && r <= 1) ratio = r;
    else warnings.push(`OTEL_TRACES_SAMPLER_ARG=${arg} is not a ratio between 0 and 1; 1 applies`);
  }

  let batch: BatchSettings = {
    scheduledDelayMillis: count('OTEL_BSP_SCHEDULE_DELAY') ?? 5000,
    exportTimeoutMillis: positive('OTEL_BSP_EXPORT_TIMEOUT', 30_000),
    maxQueueSize: positive('OTEL_BSP_MAX_QUEUE_SIZE', 2048),
    maxExportBatchSize: positive('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512),
  };
  if (batch.maxExportBatchSize > batch.maxQueueSize) {
    // The specification: the batch size must not exceed the queue; the SDK would throw.
    warnings.push('OTEL_BSP_MAX_EXPORT_BATCH_SIZE exceeds OTEL_BSP_MAX_QUEUE_SIZE; the queue size is used');
    batch = { ...batch, maxExportBatchSize: batch.maxQueueSize };
  }

  const generalLength = count('OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT');
  const generalCount = count('OTEL_ATTRIBUTE_COUNT_LIMIT');
  const limits: SpanLimitSettings = {};
  const set = <K extends keyof SpanLimitSettings>(key: K, value: number | undefined) => {
    if (value !== undefined) limits[key] = value;
  };
  set('attributeValueLengthLimit', count('OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT') ?? generalLength);
  set('attributeCountLimit', count('OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT') ?? generalCount);
  set('eventCountLimit', count('OTEL_SPAN_EVENT_COUNT_LIMIT'));
  set('linkCountLimit', count('OTEL_SPAN_LINK_COUNT_LIMIT'));
  set('attributePerEventCountLimit', count('OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT'));
  set('attributePerLinkCountLimit', count('OTEL_LINK_ATTRIBUTE_COUNT_LIMIT'));

  return { sampler: { ...base, ratio }, batch, spanLimits: limits, warnings };
}
